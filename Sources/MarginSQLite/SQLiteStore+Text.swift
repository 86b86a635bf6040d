import Foundation
import GRDB
import MarginCore

extension SQLiteStore {
    func candidatePages(containing terms: [String], bookId: Int64?, visit: (PageText) throws -> Bool) throws {
        // The trigram index answers terms of three characters or more; shorter ones are checked
        // by the caller on each candidate.
        let indexed = terms.filter { $0.unicodeScalars.count >= 3 }
        guard !indexed.isEmpty else {
            return try scanPages(bookId: bookId, visit: visit)
        }
        // Rank on the index alone, then load page rows a batch at a time: sorting joined rows
        // would carry every matching page's text through the sorter.
        var (sql, arguments) = pageMatch("rowid", indexed, bookId: bookId)
        sql += " ORDER BY rank"
        let ids = try Int64.fetchCursor(db, sql: sql, arguments: arguments)
        var batch = [Int64]()
        var batchSize = 16
        func flush() throws -> Bool {
            defer { batch.removeAll(keepingCapacity: true) }
            let rows = try ModelRecord<PageText>.filter(batch.contains(Column("id"))).fetchAll(db)
            let byId = Dictionary(
                rows.compactMap { row in row.model.id.map { ($0, row.model) } }, uniquingKeysWith: { a, _ in a })
            for id in batch {
                if let page = byId[id], try !visit(page) { return false }
            }
            return true
        }
        while let id = try ids.next() {
            batch.append(id)
            if batch.count >= batchSize {
                if try !flush() { return }
                batchSize = min(batchSize * 2, 256)
            }
        }
        if !batch.isEmpty { _ = try flush() }
    }

    func countCandidatePages(containing terms: [String], bookId: Int64?) throws -> Int? {
        let indexed = terms.filter { $0.unicodeScalars.count >= 3 }
        guard !indexed.isEmpty, indexed.count == terms.count else { return nil }
        let (sql, arguments) = pageMatch("count(*)", indexed, bookId: bookId)
        return try Int.fetchOne(db, sql: sql, arguments: arguments)
    }

    func scanPages(bookId: Int64?, visit: (PageText) throws -> Bool) throws {
        var request = ModelRecord<PageText>.all()
        if let bookId { request = request.filter(Column("bookId") == bookId) }
        let cursor = try request.order(Column("bookId"), Column("number")).fetchCursor(db)
        while let record = try cursor.next() {
            if try !visit(record.model) { return }
        }
    }

    func candidateAnnotations(containing terms: [String], bookId: Int64?) throws -> [(kind: String, id: Int64)] {
        let indexed = terms.filter { $0.unicodeScalars.count >= 3 }
        var sql = "SELECT kind, ref FROM annotation_fts"
        var arguments = StatementArguments()
        var conditions = [String]()
        if !indexed.isEmpty {
            conditions.append("annotation_fts MATCH ?")
            arguments += [ftsMatch(indexed)]
        }
        if let bookId {
            conditions.append("bookId = ?")
            arguments += [bookId]
        }
        if !conditions.isEmpty { sql += " WHERE " + conditions.joined(separator: " AND ") }
        sql += indexed.isEmpty ? " ORDER BY rowid" : " ORDER BY rank"
        return try Row.fetchAll(db, sql: sql, arguments: arguments).map { row in (row[0], row[1]) }
    }
}

/// An FTS5 query holding every term as a quoted string (substrings, with the trigram index).
private func ftsMatch(_ terms: [String]) -> String {
    terms.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: " AND ")
}

/// `SELECT <columns> FROM page_fts` for the pages holding every term (of one book, if given).
private func pageMatch(_ columns: String, _ terms: [String], bookId: Int64?) -> (String, StatementArguments) {
    var sql = "SELECT \(columns) FROM page_fts WHERE page_fts MATCH ?"
    var arguments: StatementArguments = [ftsMatch(terms)]
    if let bookId {
        sql += " AND bookId = ?"
        arguments += [bookId]
    }
    return (sql, arguments)
}

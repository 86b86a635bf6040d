import Foundation
import GRDB

extension SQLiteStore {
    func candidatePages(containing terms: [String], bookId: Int64?, visit: (PageText) throws -> Bool) throws {
        // The trigram index answers terms of three characters or more; shorter ones are checked
        // by the caller on each candidate.
        let indexed = terms.filter { $0.unicodeScalars.count >= 3 }
        guard !indexed.isEmpty else {
            return try scanPages(bookId: bookId, visit: visit)
        }
        let match = indexed.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" }.joined(separator: " AND ")
        var sql = """
            SELECT page.* FROM page_fts JOIN page ON page.id = page_fts.rowid
            WHERE page_fts MATCH ?
            """
        var arguments: StatementArguments = [match]
        if let bookId {
            sql += " AND page_fts.bookId = ?"
            arguments += [bookId]
        }
        sql += " ORDER BY page_fts.rank, page.bookId, page.number"
        let cursor = try ModelRecord<PageText>.fetchCursor(db, sql: sql, arguments: arguments)
        while let record = try cursor.next() {
            if try !visit(record.model) { return }
        }
    }

    func scanPages(bookId: Int64?, visit: (PageText) throws -> Bool) throws {
        var request = ModelRecord<PageText>.all()
        if let bookId { request = request.filter(Column("bookId") == bookId) }
        let cursor = try request.order(Column("bookId"), Column("number")).fetchCursor(db)
        while let record = try cursor.next() {
            if try !visit(record.model) { return }
        }
    }
}

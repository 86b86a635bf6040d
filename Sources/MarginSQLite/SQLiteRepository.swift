import Foundation
import GRDB
import MarginCore

/// The SQLite (GRDB) implementation of `Repository`.
struct SQLiteRepository: Repository {
    let writer: any DatabaseWriter
    /// The database file, for messages; nil in memory.
    var path: String?
    /// Set once this process has committed a write (so the WAL is checkpointed at the end).
    var wrote: WriteFlag = WriteFlag()
    /// What the vocabulary answered to this library's reads, for the next ones (none kept when
    /// `MARGIN_PLAIN` names `vocabulary-memory`).
    let vocabulary: VocabularyAnswers? = VocabularyAnswers.isOn ? VocabularyAnswers() : nil

    func read<T: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> T) async throws -> T {
        do {
            let vocabulary = vocabulary
            let read = { @Sendable (db: Database) throws -> T in
                try body(SQLiteStore(db: db, termExpressions: TermExpressions(shared: vocabulary)))
            }
            if OneThread.isOn { return try readInPlace(read) }
            return try await writer.read(read)
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) async throws -> T {
        do {
            let write = { @Sendable (db: Database) throws -> T in
                let inserted = InsertedWords()
                let result = try body(SQLiteStore(db: db, insertedWords: inserted))
                // The page index follows the pages this transaction changed.
                try PageWords.sync(db, known: inserted.words)
                // Counts committed writes in the file header; `db check` compares it with the
                // count recorded after the last checkpoint to notice a lost or stale -wal.
                let count = try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
                try db.execute(sql: "PRAGMA user_version = \(count + 1)")
                return result
            }
            let result = OneThread.isOn ? try writeInPlace(write) : try await writer.write(write)
            wrote.set()
            return result
        } catch {
            throw StoreError.from(error, path: path)
        }
    }

    /// On one thread (`OneThread`), reads and writes are made in place: GRDB's async calls would
    /// run them on a Dispatch queue, a thread started for one query. (Called from a synchronous
    /// function, GRDB's blocking overloads are the ones chosen.)
    private func readInPlace<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.read(body)
    }

    private func writeInPlace<T>(_ body: (Database) throws -> T) throws -> T {
        try writer.write(body)
    }
}

/// A column the store adds to a model's own.
private struct ExtraColumn: CodingKey {
    var stringValue: String
    var intValue: Int? { nil }
    init(stringValue: String) { self.stringValue = stringValue }
    init?(intValue: Int) { nil }
}

/// Wraps any `Model` as a GRDB record: the model's own `Codable` conformance gives the columns.
struct ModelRecord<M: Model>: Codable, FetchableRecord, MutablePersistableRecord {
    var model: M

    init(_ model: M) { self.model = model }
    init(from decoder: any Decoder) throws { model = try M(from: decoder) }
    /// Rows are decoded by `RowDecoder`, not GRDB's `Decodable` support (same conversions).
    init(row: Row) throws { model = try M(from: RowDecoder(row: row)) }
    func encode(to encoder: any Encoder) throws {
        try model.encode(to: encoder)
        // What the annotation index holds: text folded here, in Swift (see `SearchableModel`).
        if let searchable = model as? any SearchableModel {
            var container = encoder.container(keyedBy: ExtraColumn.self)
            try container.encode(folded(searchable.searchText), forKey: ExtraColumn(stringValue: "norm"))
        }
    }

    static var databaseTableName: String { M.entity }
    static var databaseDecodingUserInfo: [CodingUserInfoKey: Any] { [:] }

    mutating func didInsert(_ inserted: InsertionSuccess) {
        model.id = inserted.rowID
    }
}

struct SQLiteStore: StoreWriter, TextIndex {
    let db: Database
    /// Words of the pages this transaction inserted, worked out before it (see `PageText`).
    var insertedWords: InsertedWords?
    /// How many pages a search's expression matched, when its candidates were all read (the
    /// count of pages past a search's limit then needs no second pass over the index).
    let candidateCounts = CandidateCounts()
    /// The index's expressions of the terms searched in this transaction.
    let termExpressions: TermExpressions

    init(db: Database, insertedWords: InsertedWords? = nil, termExpressions: TermExpressions = TermExpressions()) {
        self.db = db
        self.insertedWords = insertedWords
        self.termExpressions = termExpressions
    }

    var textIndex: any TextIndex { self }
    var user: String? { nil }

    func fetch<M: Model>(_ query: Query<M>) throws -> [M] {
        // The SQL is written here, not by GRDB's query interface, whose generation costs more
        // than the query itself for a short one (and grows with the values of an IN list).
        var sql = SelectSQL()
        let statement = try db.cachedStatement(sql: "SELECT * FROM \(quoted(M.entity))" + sql.clauses(query))
        try statement.setArguments(sql.arguments)
        // Rows decoded with the columns' positions found once for the statement (`RowDecoder`).
        let columns = ColumnCursor(ColumnPositions(statement.columnNames))
        let rows = try Row.fetchCursor(statement)
        var models = [M]()
        // The models a listing reads in bulk read themselves column by column (`RowReadable`);
        // each cast is of a type to itself.
        let reads: (any RowReadable.Type)? =
            M.self == Book.self ? Book.self : M.self == Source.self ? Source.self : M.self == Tag.self ? Tag.self : nil
        while let row = try rows.next() {
            if let reads,
                let model = try reads.init(
                    reading: RowReader(row: row, columns: columns, statement: statement.sqliteStatement)) as? M
            {
                models.append(model)
            } else {
                models.append(try M(from: RowDecoder(row: row, columns: columns)))
            }
        }
        return models
    }

    func pageLabels(of books: [Int64]) throws -> [Int64: [String]] {
        guard !books.isEmpty else { return [:] }
        // The labels alone: a guide's row also reads its outline (JSON, hundreds of entries) and hashes
        // it to find it decoded. One statement, kept, for any number of books (`bookList`).
        let rows = try Row.fetchCursor(
            statement(
                "SELECT bookId, labels FROM \(quoted(BookGuide.entity)) WHERE bookId IN \(bookList) AND labels IS NOT NULL"
            ), arguments: [jsonList(books)])
        var labels = [Int64: [String]]()
        while let row = try rows.next() {
            let text: String = row[1]
            labels[row[0]] = BookGuide.labels(json: text)
        }
        return labels
    }

    /// The titles alone (the protocol's reading decodes every column of each book), in one
    /// statement for any number of books (`bookList`).
    func titles(of books: [Int64]) throws -> [Int64: String] {
        guard !books.isEmpty else { return [:] }
        let rows = try Row.fetchCursor(
            statement("SELECT id, title FROM \(quoted(Book.entity)) WHERE id IN \(bookList)"),
            arguments: [jsonList(books)])
        var titles = [Int64: String]()
        while let row = try rows.next() {
            // Decoded with errors, not traps: a hand-edited title may be anything.
            titles[try row.decode(Int64.self, atIndex: 0)] = try row.decode(String.self, atIndex: 1)
        }
        return titles
    }

    /// What the protocol's reading asks in three or four statements (a count, a sum, the one
    /// title, the languages: each a pass over the books), in one, kept (`statement`).
    func searchedBooks(_ books: [Int64]?, languages: Bool) throws -> SearchedBooks {
        let textless = "FILTER (WHERE textlessPages > 0)"
        let sql =
            "SELECT count(*) \(textless), coalesce(sum(textlessPages) \(textless), 0), max(title) \(textless), "
            + (languages ? "json_group_array(DISTINCT lang) FILTER (WHERE lang IS NOT NULL)" : "NULL")
            + " FROM \(quoted(Book.entity))" + (books == nil ? "" : " WHERE id IN \(bookList)")
        guard let row = try Row.fetchOne(statement(sql), arguments: books.map { [jsonList($0)] } ?? []) else {
            return SearchedBooks()
        }
        let count = try row.decode(Int.self, atIndex: 0)
        var languageList = [String]()
        if let json = try row.decode(String?.self, atIndex: 3) {
            languageList = try JSONDecoder().decode([String].self, from: Data(json.utf8)).sorted()
        }
        return SearchedBooks(
            textlessBooks: count, textlessPages: try row.decode(Int.self, atIndex: 1),
            textlessTitle: count == 1 ? try row.decode(String?.self, atIndex: 2) : nil, languages: languageList)
    }

    func count<M: Model>(_ query: Query<M>) throws -> Int {
        try aggregate("COUNT(*)", query)
    }

    func sum<M: Model>(_ field: Field<M, Int>, _ query: Query<M>) throws -> Int {
        // Field names come from model code, never from users.
        try aggregate("coalesce(sum(\(quoted(field.name))), 0)", query)
    }

    func distinct<M: Model>(_ field: Field<M, String?>, _ query: Query<M>) throws -> [String] {
        var sql = SelectSQL()
        let column = quoted(field.name)
        let clauses = sql.clauses(query.limit(nil).filter(.not(field.isNull)), withOrder: false)
        return try String.fetchAll(
            db, sql: "SELECT DISTINCT \(column) FROM \(quoted(M.entity))" + clauses, arguments: sql.arguments)
    }

    /// One number over the rows `query` selects, written out: GRDB's query interface would
    /// read the whole schema first (two more statements, 2.5 million instructions of a search).
    private func aggregate<M: Model>(_ expression: String, _ query: Query<M>) throws -> Int {
        var sql = SelectSQL()
        let clauses = sql.clauses(query.limit(nil), withOrder: false)
        return try Int.fetchOne(
            db, sql: "SELECT \(expression) FROM \(quoted(M.entity))" + clauses, arguments: sql.arguments) ?? 0
    }

    func insert<M: Model>(_ model: inout M) throws {
        var record = ModelRecord(model)
        try record.insert(db)
        model = record.model
        if M.self == PageText.self, let insertedWords, let page = model as? PageText, let id = page.id,
            let words = page.indexedWords
        {
            insertedWords.words[id] = words
        }
    }

    func update<M: Model>(_ model: M) throws {
        try ModelRecord(model).update(db)
    }

    func upsert<M: Model>(_ model: inout M) throws {
        var record = ModelRecord(model)
        // Found by its natural key, never by a row id it may carry.
        record.model.id = nil
        let keepsUUID = try record.databaseDictionary.keys.contains("uuid") && !M.naturalKey.contains("uuid")
        let saved = try record.upsertAndFetch(
            db, onConflict: M.naturalKey,
            doUpdate: { _ in keepsUUID ? [Column("uuid").noOverwrite] : [] })
        model = saved.model
    }

    func delete<M: Model>(_ query: Query<M>) throws -> Int {
        var sql = SelectSQL()
        try db.execute(sql: sql.delete(query), arguments: sql.arguments)
        return db.changesCount
    }
}

/// SQLite's spelling of a query (`QueryRenderer`), the values bound as arguments (the same SQL
/// GRDB's query interface writes for them).
struct SQLiteDialect: SQLDialect {
    /// The values bound, in order. (Made into `StatementArguments` once: each
    /// `StatementArguments(_:)` instantiates a key path, which cost more than the query for a
    /// list of a few hundred ids.)
    private(set) var values = [DatabaseValue]()

    mutating func bind(_ value: StoreValue, column: String?) -> String {
        values.append(databaseValue(value))
        return "?"
    }

    let truth = (true: "1", false: "0")
    func orderKey(_ column: String) -> String { quotedIdentifier(column) + " COLLATE NOCASE" }
    /// SQLite keeps rows that sort equal in rowid order.
    let ordersByIdLast = false
    mutating func hasPrefix(_ column: String, text: String) -> String {
        let length = bind(.text(text), column: nil)
        return "substr(\(column), 1, length(\(length))) = \(bind(.text(text), column: nil))"
    }

    func limit(_ limit: Int?, offset: Int?) -> String {
        if let limit { return " LIMIT \(limit)" + (offset.map { " OFFSET \($0)" } ?? "") }
        return offset.map { " LIMIT -1 OFFSET \($0)" } ?? ""
    }
}

/// A query rendered for SQLite, its arguments ready for a statement.
struct SelectSQL {
    private var renderer = QueryRenderer(SQLiteDialect())
    var arguments: StatementArguments { StatementArguments(renderer.dialect.values) }

    mutating func clauses<M: Model>(_ query: Query<M>, withOrder: Bool = true) -> String {
        renderer.clauses(query, withOrder: withOrder)
    }

    mutating func condition(_ predicate: MarginCore.Predicate) -> String { renderer.condition(predicate) }

    mutating func delete<M: Model>(_ query: Query<M>) -> String { renderer.delete(query) }
}

/// A column or table name as an SQL identifier.
func quoted(_ name: String) -> String { quotedIdentifier(name) }

func databaseValue(_ value: StoreValue) -> DatabaseValue {
    switch value {
    case .null: return .null
    case .integer(let int): return int.databaseValue
    case .real(let double): return double.databaseValue
    case .text(let text): return text.databaseValue
    case .date(let date): return date.databaseValue
    // Stored as GRDB stores a record's UUID: 16 bytes.
    case .uuid(let uuid): return uuid.databaseValue
    }
}

/// Page counts of the searches made in one transaction, by their terms and book.
final class CandidateCounts {
    var counts: [String: Int] = [:]
    /// At least this many pages match (the search stopped reading candidates there).
    var atLeast: [String: Int] = [:]
    /// Pages matching so far and candidates not yet read of a search whose common terms are
    /// checked in the text (see `SQLiteStore.visitRarePartPages`), counted further on demand.
    var unread: [String: (counted: Int, ids: ArraySlice<Int64>, common: [[Unicode.Scalar]])] = [:]
}

/// The index words of pages inserted in one write transaction, by page id.
final class InsertedWords {
    var words: [Int64: String] = [:]
}

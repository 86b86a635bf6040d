import Foundation

/// A type the repository stores: one table (`entity`), one row per value.
///
/// Models are plain `Codable` structs; the coding keys are the column names. Every model has a
/// database id (nil until inserted) and a stable UUID that survives export and import.
public protocol Model: Codable, Sendable {
    /// The table the model lives in.
    static var entity: String { get }
    /// Columns that identify a row for `upsert` ("update if it exists, else insert").
    static var naturalKey: [String] { get }
    var id: Int64? { get set }
    var uuid: UUID { get set }
}

/// What an upsert did.
public enum UpsertResult: Sendable, Equatable {
    case inserted
    case updated
}

/// Read access to the store, valid only inside `Repository.read` or `Repository.write`.
public protocol StoreReader {
    func fetch<M: Model>(_ query: Query<M>) throws -> [M]
    func count<M: Model>(_ query: Query<M>) throws -> Int
    /// Pages whose folded text contains every folded term, best match first (the full-text
    /// index), passed to `visit` until it returns false. Candidates only: a term the index can't
    /// answer may not hold on every page given.
    func candidatePages(containing terms: [String], bookId: Int64?, visit: (PageText) throws -> Bool) throws
    /// How many pages the index says hold every term (nil when no term is long enough to ask it).
    func countCandidatePages(containing terms: [String], bookId: Int64?) throws -> Int?
    /// Every page (of one book, or all), in book and page order, until `visit` returns false.
    func scanPages(bookId: Int64?, visit: (PageText) throws -> Bool) throws
    /// Highlights and memos whose folded text (highlight text and note, memo text) contains
    /// every folded term, best first: ("highlight" | "memo", id). Candidates only.
    func candidateAnnotations(containing terms: [String], bookId: Int64?) throws -> [(kind: String, id: Int64)]
}

/// Write access to the store, valid only inside `Repository.write`: everything done through one
/// writer commits together or not at all.
public protocol StoreWriter: StoreReader {
    /// Inserts the model and sets its `id`.
    func insert<M: Model>(_ model: inout M) throws
    /// Saves every column of an existing row, found by `id`.
    func update<M: Model>(_ model: M) throws
    /// Updates the row with the same natural key (keeping its id and uuid), else inserts.
    @discardableResult func upsert<M: Model>(_ model: inout M) throws -> UpsertResult
    /// Deletes the rows the query matches; returns how many.
    @discardableResult func delete<M: Model>(_ query: Query<M>) throws -> Int
}

extension StoreReader {
    public func first<M: Model>(_ query: Query<M>) throws -> M? {
        try fetch(query.limit(1)).first
    }

    public func find<M: Model>(_ type: M.Type, id: Int64) throws -> M? {
        try first(Query<M>().filter(Field<M, Int64>("id") == id))
    }

    public func all<M: Model>(_ type: M.Type) throws -> [M] {
        try fetch(Query<M>())
    }
}

extension StoreWriter {
    @discardableResult public func delete<M: Model>(_ model: M) throws -> Int {
        guard let id = model.id else { return 0 }
        return try delete(Query<M>().filter(Field<M, Int64>("id") == id))
    }
}

/// A store of models with transactions. Implemented over SQLite by `SQLiteRepository`; the
/// protocol says nothing of SQL so that another backend could implement it.
public protocol Repository: Sendable {
    /// Runs `body` on a consistent snapshot.
    func read<T>(_ body: (any StoreReader) throws -> T) throws -> T
    /// Runs `body` in one write transaction: it commits when `body` returns, and rolls back
    /// everything when it throws.
    func write<T>(_ body: (any StoreWriter) throws -> T) throws -> T
}

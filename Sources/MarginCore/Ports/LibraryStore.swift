import Foundation

/// A library's database as the use cases see it: the library's writes as named transactions
/// (`LibraryTransactions`), a `Repository` of typed models for reads and those transactions,
/// and what `margin db` reports. SQLite implements it (`MarginSQLite`); any backend can.
public protocol LibraryStore: LibraryTransactions {
    /// The repository every use case goes through.
    var repository: any Repository { get }
    /// Where the store lives, for messages; nil in memory.
    var path: String? { get }
    /// The copy made before this open upgraded the schema, if it did.
    var backupPath: String? { get }
    /// Ends this process's writing (makes what it wrote durable on its own).
    func finishWriting()
    func schemaStatus() throws -> SchemaStatus
    func integrityReport() throws -> IntegrityReport
    /// The write count recorded after the last finished write, and the store's own.
    func writeCounts() throws -> (recorded: Int?, database: Int)
    /// The store itself when it keeps the PDFs (a team's database); nil for one that doesn't.
    /// (Asked here rather than with `as? any FileKeepingStore`: on Linux a failing cast to a
    /// protocol scans every conformance in the binary, twice.)
    var fileKeeper: (any FileKeepingStore)? { get }
}

extension LibraryStore {
    public var fileKeeper: (any FileKeepingStore)? { nil }
}

/// The schema state of a library database.
public struct SchemaStatus: Sendable, Encodable {
    /// Migrations applied (the schema version).
    public var version: Int
    /// The version this build of margin writes.
    public var latest: Int
    public var applied: [String]
    public var pending: [String]

    public init(version: Int, latest: Int, applied: [String], pending: [String]) {
        self.version = version
        self.latest = latest
        self.applied = applied
        self.pending = pending
    }
}

/// What an integrity check of the database found.
public struct IntegrityReport: Sendable, Encodable {
    /// `PRAGMA integrity_check` lines; `["ok"]` when healthy.
    public var integrity: [String]
    /// Rows whose foreign key points at nothing, as "table rowid → parent".
    public var foreignKeyViolations: [String]
    public var ok: Bool { integrity == ["ok"] && foreignKeyViolations.isEmpty }

    public init(integrity: [String], foreignKeyViolations: [String]) {
        self.integrity = integrity
        self.foreignKeyViolations = foreignKeyViolations
    }
}

/// Which annotations a team library's reads return: the user's own (the default), also those
/// other users shared (`--all-users`), or every one the database lets the user see (a copy of
/// the whole library). A personal library has one user and returns all of them.
public enum Audience: Sendable {
    case mine
    case sharedToo
    case everything

    /// The audience of the work under way in this task, when it differs from the store's (a
    /// reader's request asking for the team's shared annotations, or for the user's own).
    @TaskLocal public static var chosen: Audience?
}

/// A library many users share (PostgreSQL): who the user is, whose annotations reads return,
/// and letting another user in.
public protocol TeamStore: AnyObject, Sendable {
    /// The connection's role.
    var user: String { get }
    /// Whether the connection is encrypted (TLS), as the server says.
    var encrypted: Bool { get }
    var audience: Audience { get set }
    /// Lets a PostgreSQL role use the library (read and write books, and its own annotations).
    func grant(_ role: String) throws
    /// Brings the server's statistics of what a search reads up to date, after a bulk write.
    func settle() throws
}

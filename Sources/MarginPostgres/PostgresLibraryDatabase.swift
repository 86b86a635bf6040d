import Foundation
import Logging
import MarginCore
import NIOCore
import NIOPosix
import PostgresNIO

/// A team library on PostgreSQL: the same store ports as SQLite, over PostgresNIO, in the
/// schema `margin` of the database a `postgres://` URL names. Opening it applies the pending
/// migrations (in one transaction each) and refuses, untouched, a schema newer than this margin.
public final class PostgresLibraryDatabase: LibraryStore, @unchecked Sendable {
    let connection: PostgresConnection
    let logger: Logger
    let configuration: PostgresConnection.Configuration
    /// One transaction at a time on the connection.
    let turn = NSLock()
    private let filesLock = NSLock()
    private var filesSession: PostgresLibraryDatabase?

    /// PDFs travel on a connection of their own, opened on first use: a file may be fetched
    /// while a transaction of the store is open.
    func files() throws -> PostgresLibraryDatabase {
        filesLock.lock()
        defer { filesLock.unlock() }
        if let filesSession { return filesSession }
        do {
            let session = try PostgresLibraryDatabase(sibling: self)
            filesSession = session
            return session
        } catch {
            throw StoreError.cannotOpen(path: path ?? "postgres", reason: Self.message(error))
        }
    }
    let queue = DispatchQueue(label: "margin.postgres", attributes: .concurrent)
    /// The URL without its password, for messages.
    public let path: String?
    public var backupPath: String? { nil }
    public var repository: any Repository { PostgresRepository(database: self) }

    /// Connects to the database `url` names (`postgres://USER[:PASSWORD]@HOST[:PORT]/DB`; the
    /// password may also come from `password`) and brings its schema up to date.
    public init(url: String, password fallback: String? = nil) throws {
        guard let components = URLComponents(string: url), ["postgres", "postgresql"].contains(components.scheme),
            let host = components.host, !host.isEmpty
        else {
            throw StoreError.cannotOpen(path: "that postgres URL", reason: "not a postgres://USER@HOST[:PORT]/DB URL")
        }
        let database = String(components.path.drop { $0 == "/" })
        let user = components.user ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
        var shown = components
        shown.password = nil
        path = shown.string ?? url
        var logger = Logger(label: "margin.postgres")
        logger.logLevel = .critical
        self.logger = logger
        configuration = PostgresConnection.Configuration(
            host: host, port: components.port ?? 5432, username: user, password: components.password ?? fallback,
            database: database.isEmpty ? user : database, tls: .disable)
        do {
            connection = try PostgresConnection.connect(
                on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 1, logger: logger
            ).wait()
        } catch {
            throw StoreError.cannotOpen(path: path ?? url, reason: Self.message(error))
        }
        try migrate()
    }

    /// A second connection to the same database, its schema already current.
    private init(sibling: PostgresLibraryDatabase) throws {
        path = sibling.path
        logger = sibling.logger
        configuration = sibling.configuration
        connection = try PostgresConnection.connect(
            on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 2, logger: logger
        ).wait()
        try run("SET search_path TO margin, public")
    }

    deinit {
        try? connection.close().wait()
    }

    // MARK: Queries

    /// Runs one statement and returns its rows.
    @discardableResult
    func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> PostgresQueryResult {
        do {
            return try connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger).wait()
        } catch {
            throw StoreError.failed(path: path ?? "postgres", message: Self.message(error))
        }
    }

    /// Runs `body` in one transaction on this connection, committed when it returns.
    func transaction<T>(readOnly: Bool, _ body: () throws -> T) throws -> T {
        turn.lock()
        defer { turn.unlock() }
        try run(readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN")
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            _ = try? run("ROLLBACK")
            throw error
        }
    }

    /// What PostgreSQL said, without the query.
    static func message(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let server = error.serverInfo, let message = server[.message] {
                return message + (server[.detail].map { " (\($0))" } ?? "")
            }
            if error.code == .connectionError {
                let cause = error.underlying.map { String(describing: $0) } ?? ""
                let refused = cause.contains("refused") || cause.contains("ECONNREFUSED")
                return refused
                    ? "no PostgreSQL server answers there (connection refused)"
                    : "no connection to the PostgreSQL server" + (cause.isEmpty ? "" : " (\(cause))")
            }
            return "\(error.code)"
        }
        return "\(error)"
    }

    // MARK: Schema

    private func migrate() throws {
        try run("CREATE SCHEMA IF NOT EXISTS margin")
        try run("SET search_path TO margin, public")
        try run(
            "CREATE TABLE IF NOT EXISTS margin.migrations (name text PRIMARY KEY, \"appliedAt\" timestamptz NOT NULL DEFAULT now())"
        )
        let applied = try appliedMigrations()
        let known = Set(PostgresMigrations.all.map(\.name))
        guard applied.allSatisfy(known.contains) else { throw StoreError.newerSchema(path: path ?? "postgres") }
        for migration in PostgresMigrations.all where !applied.contains(migration.name) {
            try transaction(readOnly: false) {
                // One statement at a time: the extended protocol takes one per query.
                for statement in migration.sql.components(separatedBy: ";\n") {
                    let trimmed = statement.trimmingCharacters(in: .whitespacesAndNewlines)
                    if !trimmed.isEmpty { try run(trimmed) }
                }
                var binds = PostgresBindings()
                binds.append(migration.name)
                try run("INSERT INTO margin.migrations (name) VALUES ($1)", binds)
            }
        }
    }

    private func appliedMigrations() throws -> [String] {
        try run("SELECT name FROM margin.migrations ORDER BY \"appliedAt\", name").rows.map {
            try $0.decode(String.self)
        }
    }

    // MARK: LibraryStore

    public func finishWriting() {}

    public func schemaStatus() throws -> SchemaStatus {
        let applied = try turn.withLock { try appliedMigrations() }
        let all = PostgresMigrations.all.map(\.name)
        return SchemaStatus(
            version: applied.count, latest: all.count, applied: applied, pending: all.filter { !applied.contains($0) })
    }

    public func integrityReport() throws -> IntegrityReport {
        // PostgreSQL keeps its own pages and foreign keys whole; what can be checked from here is
        // that every table answers.
        try turn.withLock {
            for table in PostgresMigrations.textColumns.keys.sorted() { try run("SELECT 1 FROM \"\(table)\" LIMIT 1") }
        }
        return IntegrityReport(integrity: ["ok"], foreignKeyViolations: [])
    }

    public func writeCounts() throws -> (recorded: Int?, database: Int) { (nil, 0) }
}

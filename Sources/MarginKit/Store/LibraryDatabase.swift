import Foundation
import GRDB
import GRDBSQLite

/// Owns the library's SQLite database: opens it (WAL, foreign keys, a busy timeout), backs it up
/// and migrates it to the current schema, and hands out the `Repository` over it.
public final class LibraryDatabase: Sendable {
    let writer: any DatabaseWriter
    /// The database file; nil for an in-memory database.
    public let path: String?
    /// The repository every use case goes through.
    public let repository: any Repository
    /// The backup made before this open migrated the file, if it did.
    public let backupPath: String?

    /// Opens (creating if needed) the database file at `path` and migrates it.
    ///
    /// A file written by a newer Margin (with migrations this build doesn't know) is refused and
    /// left untouched. Before migrating an existing file, a copy is written beside it as
    /// `<name>.bak-<version>`.
    public init(path: String) throws {
        let fileManager = FileManager.default
        let existed = fileManager.fileExists(atPath: path)
        if !existed {
            // Created user-only before SQLite opens it; SQLite gives -wal and -shm the same mode.
            guard fileManager.createFile(atPath: path, contents: nil, attributes: [.posixPermissions: 0o600]) else {
                throw StoreError.cannotOpen(path: path, reason: "cannot create the file")
            }
        }
        let migrator = Schema.migrator
        var applied = 0
        var complete = true
        if existed {
            // Look before touching: a read-only connection decides whether the file is ours to migrate.
            do {
                var readOnly = Self.makeConfiguration()
                readOnly.readonly = true
                let queue = try DatabaseQueue(path: path, configuration: readOnly)
                let (superseded, count, done) = try queue.read { db in
                    (
                        try migrator.hasBeenSuperseded(db), try migrator.appliedIdentifiers(db).count,
                        try migrator.hasCompletedMigrations(db)
                    )
                }
                try queue.close()
                if superseded { throw StoreError.newerSchema(path: path) }
                applied = count
                complete = done
            } catch let error as StoreError {
                throw error
            } catch {
                throw StoreError.cannotOpen(path: path, reason: "\(error)")
            }
        }
        let pool: DatabasePool
        var backup: String?
        do {
            pool = try DatabasePool(path: path, configuration: Self.makeConfiguration())
            if !complete && applied > 0 {
                // Written under a temporary name and renamed: a backup is whole or absent.
                let target = "\(path).bak-\(applied)"
                let partial = target + ".partial"
                try? fileManager.removeItem(atPath: partial)
                try pool.writeWithoutTransaction { db in
                    try db.execute(sql: "VACUUM INTO ?", arguments: [partial])
                }
                guard rename(partial, target) == 0 else {
                    throw StoreError.cannotOpen(path: path, reason: "cannot write the backup \(target)")
                }
                backup = target
            }
            // A library already at the latest version is not written to at all.
            if !existed || !complete { try migrator.migrate(pool) }
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "\(error)")
        }
        self.writer = pool
        self.path = path
        self.backupPath = backup
        self.repository = SQLiteRepository(writer: pool)
    }

    /// An empty database in memory, migrated to the current schema, for tests.
    public init(inMemory: Void = ()) throws {
        let queue = try DatabaseQueue(configuration: Self.makeConfiguration())
        try Schema.migrator.migrate(queue)
        self.writer = queue
        self.path = nil
        self.backupPath = nil
        self.repository = SQLiteRepository(writer: queue)
    }

    /// The one configuration used by production and tests.
    static func makeConfiguration() -> Configuration {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        // Another margin process may hold the write lock: wait for it rather than fail.
        configuration.busyMode = .timeout(30)
        configuration.label = "margin"
        configuration.prepareDatabase { db in
            // Keep the -wal file when the last connection closes, so the next margin process
            // opens the library without a write (and its fsyncs): a read-only command stays one.
            var persist: Int32 = 1
            _ = sqlite3_file_control(db.sqliteConnection, nil, SQLITE_FCNTL_PERSIST_WAL, &persist)
            db.add(
                function: DatabaseFunction("margin_fold", argumentCount: 1, pure: true) { values in
                    guard let text = String.fromDatabaseValue(values[0]) else { return nil }
                    return SearchableText(text).foldedString
                })
        }
        return configuration
    }

    /// The schema version of a database: how many of this build's migrations it has applied.
    public static var latestVersion: Int { Schema.identifiers.count }
}

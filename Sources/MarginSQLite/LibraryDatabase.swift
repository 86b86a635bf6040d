import CFTS5
import Foundation
import GRDB
import GRDBSQLite
import MarginCore

/// Owns the library's SQLite database: opens it (WAL, foreign keys, a busy timeout), backs it up
/// and migrates it to the current schema, and hands out the `Repository` over it.
public final class LibraryDatabase: LibraryStore {
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
    ///
    /// `readers` above 1 (a server) opens a pool: that many connections read side by side beside
    /// the one that writes (SQLite's WAL); a command opens one connection.
    public init(path: String, readers: Int = 1) throws {
        let fileManager = FileManager.default
        let folder = (path as NSString).deletingLastPathComponent
        if fileManager.fileExists(atPath: path),
            access(path, W_OK) != 0 || access(folder.isEmpty ? "." : folder, W_OK) != 0
        {
            // A read-only library (a read-only mount, or no write permission): reading works.
            let pool = try Self.openReadOnly(path: path)
            self.writer = pool
            self.path = path
            self.backupPath = nil
            self.repository = SQLiteRepository(writer: pool, path: path)
            return
        }
        if fileManager.fileExists(atPath: path) {
            // Already in WAL mode and at this build's schema: open without any lock (the common
            // case; opening then changes nothing in the file).
            if try Self.checkHeader(path), let opened = try? Self.openCurrent(path: path, readers: readers) {
                self.writer = opened
                self.path = path
                self.backupPath = nil
                self.repository = SQLiteRepository(writer: opened, path: path)
                return
            }
        }
        // Creating or migrating: one process at a time, the others wait and then find it done.
        let lock = try OpenLock(path: path + ".lock")
        defer { lock.release() }
        let existed = fileManager.fileExists(atPath: path)
        if existed { _ = try Self.checkHeader(path) }
        if !existed {
            // Created user-only before SQLite opens it; SQLite gives -wal and -shm the same mode.
            guard createNewFile(atPath: path) else {
                throw StoreError.cannotOpen(path: path, reason: "cannot create the file")
            }
        }
        let migrator = Schema.migrator
        var applied = 0
        var complete = true
        if existed {
            // Look before touching: a read-only connection decides whether the file is ours to migrate.
            do {
                func look(readOnly: Bool) throws -> (Bool, Int, Bool) {
                    var configuration = Self.makeConfiguration()
                    configuration.readonly = readOnly
                    let queue = try DatabaseQueue(path: path, configuration: configuration)
                    defer { try? queue.close() }
                    return try queue.read { db in
                        (
                            try migrator.hasBeenSuperseded(db), try migrator.appliedIdentifiers(db).count,
                            try migrator.hasCompletedMigrations(db)
                        )
                    }
                }
                let (superseded, count, done): (Bool, Int, Bool)
                do {
                    (superseded, count, done) = try look(readOnly: true)
                } catch let error as DatabaseError where error.resultCode == .SQLITE_READONLY {
                    // A process died mid-write and left its WAL to recover, which a read-only
                    // connection can't do; this process holds the open lock, so it may.
                    (superseded, count, done) = try look(readOnly: false)
                }
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
            var configuration = Self.makeConfiguration()
            configuration.maximumReaderCount = max(readers, 5)
            pool = try DatabasePool(path: path, configuration: configuration)
            if !complete && applied > 0 {
                // Written under a temporary name and renamed: a backup is whole or absent.
                let target = "\(path).bak-\(applied)"
                let partial = target + ".partial"
                try? fileManager.removeItem(atPath: partial)
                try pool.writeWithoutTransaction { db in
                    try db.execute(sql: "VACUUM INTO ?", arguments: [partial])
                }
                chmod(partial, 0o600)
                guard rename(partial, target) == 0 else {
                    throw StoreError.cannotOpen(path: path, reason: "cannot write the backup \(target)")
                }
                backup = target
            }
            // A library already at the latest version is not written to at all.
            if !existed || !complete {
                try migrator.migrate(pool)
                // Migrations apply in order: the first `applied` were there before.
                if existed, let index = Schema.identifiers.firstIndex(of: Schema.vacuumAfter), applied <= index {
                    try pool.writeWithoutTransaction { try $0.execute(sql: "VACUUM") }
                }
            }
        } catch {
            throw StoreError.from(error, path: path) as? StoreError
                ?? StoreError.cannotOpen(path: path, reason: "\(error)")
        }
        self.writer = pool
        self.path = path
        self.backupPath = backup
        self.repository = SQLiteRepository(writer: pool, path: path)
    }

    /// Opens a library that can't be written, for reading; it must be at this build's schema.
    private static func openReadOnly(path: String) throws -> DatabasePool {
        _ = try checkHeader(path)
        var configuration = makeConfiguration()
        configuration.readonly = true
        do {
            let pool = try DatabasePool(path: path, configuration: configuration)
            let (superseded, complete) = try pool.read { db in
                (try Schema.migrator.hasBeenSuperseded(db), try Schema.migrator.hasCompletedMigrations(db))
            }
            if superseded { throw StoreError.newerSchema(path: path) }
            if !complete {
                throw StoreError.cannotOpen(
                    path: path,
                    reason:
                        "it needs upgrading to this margin's schema, and it is read-only; open it once where it can be written"
                )
            }
            return pool
        } catch let error as StoreError {
            throw error
        } catch {
            throw StoreError.cannotOpen(
                path: path,
                reason:
                    "it is read-only and SQLite cannot read it (\(StoreError.from(error, path: path).localizedDescription))"
            )
        }
    }

    /// Opens a library that is complete at this build's schema, or returns nil (and opens
    /// nothing) when it needs creating or migrating.
    ///
    /// One connection (a `DatabaseQueue`) serves a command: it reads or writes one thing at a
    /// time, and a pool would open a writer connection and set it up (several hundred
    /// microseconds) for commands that only read. A server (`readers` above 1) gets a pool, its
    /// requests reading side by side. The file is in WAL mode (checked by the caller), so other
    /// processes read while this one writes, and the other way round.
    private static func openCurrent(path: String, readers: Int) throws -> (any DatabaseWriter)? {
        var configuration = makeConfiguration()
        let opened: any DatabaseWriter
        if readers > 1 {
            configuration.maximumReaderCount = readers
            opened = try DatabasePool(path: path, configuration: configuration)
        } else {
            opened = try DatabaseQueue(path: path, configuration: configuration)
        }
        // At this build's schema: the migrations applied are exactly the ones it knows (none
        // superseded, none missing). Read from GRDB's table directly: the migrator's own checks
        // go through its query interface, which introspects the schema first (1.9 million
        // instructions, 3 % of a search). A missing table throws: the caller then opens the
        // careful way.
        let current = try opened.read { db in
            Set(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations")) == Set(Schema.identifiers)
        }
        if current { return opened }
        try opened.close()
        return nil
    }

    /// Refuses a database file shorter than its header says (part of it was lost). Returns
    /// whether the file is in WAL mode.
    ///
    /// Another process's checkpoint writes page 1 (with the new page count) before the pages that
    /// lengthen the file, and until it has written them they are in the WAL: a file read short
    /// while that happens is whole. So a short file is refused only when it stays the same
    /// (header, size, modification time, WAL size) for a while: 0.2 s with an empty WAL (nothing
    /// can complete it), 1 s with one (a checkpoint that stopped changing the file is not running).
    static func checkHeader(_ path: String) throws -> Bool {
        var seen: HeaderState?
        var since = Date()
        while true {
            guard let state = HeaderState(path) else { return false }
            guard let (bytes, expected) = state.short else { return state.wal }
            if state != seen {
                seen = state
                since = Date()
            } else if Date().timeIntervalSince(since) >= (state.walBytes <= 32 ? 0.2 : 1) {
                throw StoreError.truncated(path: path, bytes: bytes, expected: expected)
            }
            usleep(10_000)
        }
    }

    /// What `checkHeader` reads of a database file: its header, size and time, then its WAL's size.
    struct HeaderState: Equatable {
        let header: [UInt8]
        let size: Int64
        let modified: timespec
        let walBytes: Int64

        /// Nil when the file is not an SQLite database (SQLite then says what it is).
        init?(_ path: String) {
            let descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { return nil }
            defer { close(descriptor) }
            var bytes = [UInt8](repeating: 0, count: 100)
            var status = stat()
            guard pread(descriptor, &bytes, 100, 0) == 100, bytes.prefix(16).elementsEqual("SQLite format 3\u{0}".utf8),
                fstat(descriptor, &status) == 0
            else { return nil }
            header = bytes
            size = Int64(status.st_size)
            modified = status.st_mtim
            // Read after the file: a checkpoint that ended since leaves an empty WAL and a whole file.
            walBytes = fileSize(path + "-wal") ?? 0
        }

        var wal: Bool { header[18] == 2 && header[19] == 2 }

        /// The file's size and the size its header gives, when the file is shorter.
        var short: (Int64, Int64)? {
            func number(_ offset: Int, _ width: Int) -> Int64 {
                header[offset..<offset + width].reduce(Int64(0)) { $0 << 8 | Int64($1) }
            }
            let rawPageSize = number(16, 2)
            let pageSize = rawPageSize == 1 ? 65536 : rawPageSize
            let pages = number(28, 4)
            // The page count is valid only when the "version valid for" matches the change counter.
            guard pages > 0, number(92, 4) == number(24, 4), size < pages * pageSize else { return nil }
            return (size, pages * pageSize)
        }

        static func == (left: HeaderState, right: HeaderState) -> Bool {
            left.header == right.header && left.size == right.size && left.walBytes == right.walBytes
                && left.modified.tv_sec == right.modified.tv_sec && left.modified.tv_nsec == right.modified.tv_nsec
        }
    }

    /// Ends a process's writing: moves everything in the WAL into the database file (so the file
    /// alone is the whole library) and records the write count beside it for `db check`.
    public func finishWriting() {
        guard let repository = repository as? SQLiteRepository, repository.wrote.isSet, let path else { return }
        do {
            let count = try writer.writeWithoutTransaction { db -> Int in
                try db.checkpoint(.truncate)
                return try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0
            }
            let temporary = path + ".seq.\(getpid())"
            try writeData(Data("\(count)\n".utf8), to: temporary)
            rename(temporary, path + ".seq")
        } catch {
            // Another process is reading: its connection or ours will checkpoint later.
        }
    }

    /// The write count recorded after the last finished write, and the database's own.
    public func writeCounts() throws -> (recorded: Int?, database: Int) {
        let recorded = path.flatMap { FileManager.default.contents(atPath: $0 + ".seq") }
            .flatMap { Int(String(decoding: $0, as: UTF8.self).trimmingWhitespace()) }
        let database = try writer.read { db in try Int.fetchOne(db, sql: "PRAGMA user_version") ?? 0 }
        return (recorded, database)
    }

    /// An empty database in memory, migrated to the current schema, for tests.
    public convenience init(inMemory: Void = ()) throws {
        try self.init(try DatabaseQueue(configuration: Self.makeConfiguration()))
    }

    /// The store over a database someone else opened (with `makeConfiguration()`), migrated
    /// to the current schema here, as GRDB's demo `AppDatabase` does.
    public init(_ writer: any DatabaseWriter) throws {
        try Schema.migrator.migrate(writer)
        self.writer = writer
        self.path = nil
        self.backupPath = nil
        self.repository = SQLiteRepository(writer: writer, path: nil)
    }

    /// The one configuration used by production and tests.
    public static func makeConfiguration() -> GRDB.Configuration {
        _ = memoryStatisticsOff
        var configuration = GRDB.Configuration()
        configuration.foreignKeysEnabled = true
        // Another margin process may hold the write lock: wait for it rather than fail.
        configuration.busyMode = .timeout(30)
        configuration.label = "margin"
        configuration.prepareDatabase { db in
            // Keep the -wal file when the last connection closes, so the next margin process
            // opens the library without a write (and its fsyncs): a read-only command stays one.
            var persist: Int32 = 1
            _ = sqlite3_file_control(db.sqliteConnection, nil, SQLITE_FCNTL_PERSIST_WAL, &persist)
            // Ranks the pages of a one-phrase search (see `SearchRanking.rankedPages`).
            _ = margin_fts5_register(db.sqliteConnection)
        }
        return configuration
    }

    /// SQLite's memory statistics turned off, before its first connection: with them, each of its
    /// allocations (every one goes to malloc: Debian's build has no lookaside) takes one mutex
    /// of the whole process, and the server's readers wait on one another there (32 users:
    /// 550 → 670 requests/s, processor per request 3.2 → 2.7 ms). Nothing here reads them.
    /// `MARGIN_PLAIN=sqlite-memory-statistics` keeps them on.
    static let memoryStatisticsOff: Bool =
        FastPaths.isOn("sqlite-memory-statistics") && margin_sqlite_without_memory_statistics() == SQLITE_OK

    /// The schema version of a database: how many of this build's migrations it has applied.
    public static var latestVersion: Int { Schema.identifiers.count }
}

/// An exclusive `flock` on a file beside the database, held while creating or migrating it.
private final class OpenLock {
    private var descriptor: Int32

    init(path: String) throws {
        descriptor = open(path, O_RDWR | O_CREAT | O_CLOEXEC, 0o600)
        guard descriptor >= 0 else {
            // A read-only folder: nobody can migrate there, so there is nothing to serialise.
            return
        }
        while flock(descriptor, LOCK_EX) != 0 {
            guard errno == EINTR else { break }
        }
    }

    func release() {
        guard descriptor >= 0 else { return }
        close(descriptor)
        descriptor = -1
    }

    deinit { release() }
}

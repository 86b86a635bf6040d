import Foundation
import Logging
import MarginCore
import NIOCore
import NIOPosix
import NIOSSL
import PostgresNIO

/// A team library on PostgreSQL: the same store ports as SQLite, over PostgresNIO, in the
/// schema `margin` of the database a `postgres://` URL names. Opening it applies the pending
/// migrations (in one transaction each) and refuses, untouched, a schema newer than this margin.
///
/// The store's transactions lease connections from PostgresNIO's pool (`PostgresClient`), so a
/// server (`margin serve`) runs them side by side; the connection opened first stays for what
/// is not a store transaction: migrations, `margin db`, and the PDFs' bytes.
public final class PostgresLibraryDatabase: LibraryStore, TeamStore, @unchecked Sendable {
    /// The connection opened first.
    let session: PostgresSession
    /// The pool reads lease their connections from.
    let client: PostgresClient
    /// The pool writes lease theirs from: a lane of their own, so a memo saved while a server's
    /// readers hold every connection of theirs does not wait for one behind the searches.
    let writers: PostgresClient
    private let running: Task<Void, Never>
    let logger: Logger
    /// What ranking weighs pages with, shared by this process's transactions.
    let statistics = PageStatistics()
    /// What this process's reads found besides the pages, kept while the content stays.
    let memory = ContentMemory()
    /// The PostgreSQL role: the user of the team library.
    public let user: String
    /// Whether the connection is encrypted (TLS), as the server sees it.
    public let encrypted: Bool
    private let audienceLock = NSLock()
    private var shownAudience = Audience.mine
    public var audience: Audience {
        get { audienceLock.withLock { shownAudience } }
        set { audienceLock.withLock { shownAudience = newValue } }
    }

    /// PDFs travel on a connection of their own, opened on first use: a use case may ask for a
    /// file while a transaction of the store is open (on the first connection, or a pooled one).
    func files() throws -> PostgresSession {
        try filesLock.withLock {
            if let filesSession { return filesSession }
            do {
                let opened = PostgresSession(
                    connection: try PostgresConnection.connect(
                        on: MultiThreadedEventLoopGroup.singleton.next(), configuration: configuration, id: 1,
                        logger: logger
                    ).wait(), logger: logger, path: path ?? "postgres")
                filesSession = opened
                return opened
            } catch {
                throw StoreError.cannotOpen(path: path ?? "postgres", reason: Self.message(error))
            }
        }
    }
    private let filesLock = NSLock()
    private var filesSession: PostgresSession?
    /// How the first connection was made (the files' connection is made alike).
    private let configuration: PostgresConnection.Configuration
    /// Where this library's transactions wait for PostgreSQL: threads of its own, one for each
    /// connection it may lease (the readers', the first) and one more (a dispatch queue's
    /// threads are Dispatch's to add: five ran the transactions of 32 readers while connections
    /// sat idle). Each library its own: one whose transactions hold every thread never keeps
    /// another's waiting. Reads run on `threads`, which yield the processor to the writes'
    /// (`ReadPriority`); writes on `writeThreads` (the writers', the first, one more).
    let threads: NIOThreadPool
    let writeThreads: NIOThreadPool
    /// The connections reads lease at most, by default: two for each core of this machine, 4 to
    /// 12. More only contend: 32 readers of `serve` on two cores, with 8, searched no faster than
    /// with 4 and waited longer (search p99 412–456 ms against 370–388; annotate p99 101–138
    /// against 60–64).
    public static let readers = min(12, max(4, 2 * ProcessInfo.processInfo.activeProcessorCount))
    /// Whether writes lease from a pool of their own (unless `MARGIN_PLAIN` names `write-lane`:
    /// then they queue for the readers' connections, as reads do).
    static let writeLane = FastPaths.isOn("write-lane")
    /// The URL without its password, for messages.
    public let path: String?
    public var backupPath: String? { nil }
    public var repository: any Repository { PostgresRepository(database: self) }

    /// Connects to the database `url` names (`postgres://USER[:PASSWORD]@HOST[:PORT]/DB`; the
    /// password may also come from `password`) and brings its schema up to date. `sslmode` in
    /// the URL's query chooses TLS as libpq does: `disable`, `prefer` (the default: TLS when the
    /// server offers it), `require` (TLS, the certificate unchecked), `verify-full` (TLS with a
    /// certificate the system, or `sslrootcert=FILE`, trusts for that host name).
    public init(url: String, password fallback: String? = nil, connections: Int = readers) throws {
        // A scheme is read in any case (RFC 3986), as the library's location reads it.
        guard let components = URLComponents(string: url),
            ["postgres", "postgresql"].contains(components.scheme?.lowercased())
        else {
            throw StoreError.cannotOpen(path: "that postgres URL", reason: "not a postgres://USER@HOST[:PORT]/DB URL")
        }
        let query = Dictionary(
            (components.queryItems ?? []).map { ($0.name, $0.value ?? "") }, uniquingKeysWith: { $1 })
        // A server on this machine through its Unix-domain socket, as libpq names it: the socket's
        // folder as `?host=/run/postgresql` (or as the URL's host, percent-encoded). Local: no TLS.
        let host = components.host.flatMap { $0.removingPercentEncoding } ?? ""
        let socketFolder = [query["host"] ?? "", host].first { $0.hasPrefix("/") }
        guard socketFolder != nil || !host.isEmpty else {
            throw StoreError.cannotOpen(
                path: "that postgres URL", reason: "not a postgres://USER@HOST[:PORT]/DB URL (or ?host=/SOCKET/FOLDER)")
        }
        let port = components.port ?? query["port"].flatMap { Int($0) } ?? 5432
        let database = String(components.path.drop { $0 == "/" })
        let user = components.user ?? ProcessInfo.processInfo.environment["USER"] ?? "postgres"
        var shown = components
        shown.password = nil
        let path = shown.string ?? url
        self.path = path
        var logger = Logger(label: "margin.postgres")
        logger.logLevel = .critical
        self.logger = logger
        let tls =
            socketFolder != nil
            ? nil : try Self.tls(mode: query["sslmode"] ?? "prefer", rootCertificate: query["sslrootcert"], path: path)
        let connectionTLS: PostgresConnection.Configuration.TLS
        let clientTLS: PostgresClient.Configuration.TLS
        do {
            if let tls {
                let context = try NIOSSLContext(configuration: tls.configuration)
                connectionTLS = tls.required ? .require(context) : .prefer(context)
                clientTLS = tls.required ? .require(tls.configuration) : .prefer(tls.configuration)
            } else {
                connectionTLS = .disable
                clientTLS = .disable
            }
        } catch {
            throw StoreError.cannotOpen(path: path, reason: "TLS: \(error)")
        }
        let password = components.password ?? fallback
        let name = database.isEmpty ? user : database
        let socket = socketFolder.map { ($0.hasSuffix("/") ? $0 : $0 + "/") + ".s.PGSQL.\(port)" }
        var first =
            socket.map {
                PostgresConnection.Configuration(unixSocketPath: $0, username: user, password: password, database: name)
            }
            ?? PostgresConnection.Configuration(
                host: host, port: port, username: user, password: password, database: name, tls: connectionTLS)
        first.options.additionalStartupParameters = PostgresSession.startupParameters
        configuration = first
        do {
            session = PostgresSession(
                connection: try PostgresConnection.connect(
                    on: MultiThreadedEventLoopGroup.singleton.next(), configuration: first, id: 0, logger: logger
                ).wait(), logger: logger, path: path)
        } catch {
            throw StoreError.cannotOpen(path: path, reason: Self.message(error))
        }
        var pooled =
            socket.map {
                PostgresClient.Configuration(unixSocketPath: $0, username: user, password: password, database: name)
            }
            ?? PostgresClient.Configuration(
                host: host, port: port, username: user, password: password, database: name, tls: clientTLS)
        pooled.options.additionalStartupParameters = PostgresSession.startupParameters
        pooled.options.maximumConnections = max(1, connections)
        threads = NIOThreadPool(numberOfThreads: max(1, connections) + 2)
        threads.start()
        writeThreads = NIOThreadPool(numberOfThreads: (Self.writeLane ? 2 : max(1, connections)) + 2)
        writeThreads.start()
        pooled.options.keepAliveBehavior = nil
        let client = PostgresClient(configuration: pooled, backgroundLogger: logger)
        self.client = client
        var writing = pooled
        writing.options.maximumConnections = Self.writeLane ? 2 : 1
        let writers = PostgresClient(configuration: writing, backgroundLogger: logger)
        self.writers = writers
        running = Task.detached {
            await withDiscardingTaskGroup { group in
                group.addTask { await client.run() }
                group.addTask { await writers.run() }
            }
        }
        do {
            // Who, how, whether the library has a schema yet, and its migrations, in one round
            // trip (the second statement fails where there is no schema, as the first tells).
            let asked = try session.send(
                "SELECT current_user::text, coalesce((SELECT ssl FROM pg_stat_ssl WHERE pid = pg_backend_pid()), false), "
                    + "to_regclass('margin.migrations') IS NULL"
            )
            let listed = try session.send(Self.appliedQuery)
            let facts = try session.wait(for: asked).rows.first?.makeRandomAccess()
            self.user = try facts?[0].decode(String.self) ?? user
            self.encrypted = try facts?[1].decode(Bool.self) ?? false
            let fresh = try facts?[2].decode(Bool.self) ?? true
            let applied = try? session.wait(for: listed).rows.map { try $0.decode(String.self) }
            try migrate(fresh: fresh, applied: fresh ? nil : applied)
        } catch {
            running.cancel()
            threads.shutdownGracefully { _ in }
            writeThreads.shutdownGracefully { _ in }
            // Closed here, as `deinit` would: a connection the server dropped in the middle of
            // these statements (a restart) may not be marked closed yet.
            try? session.connection.close().wait()
            throw error
        }
    }

    deinit {
        threads.shutdownGracefully { _ in }
        writeThreads.shutdownGracefully { _ in }
        running.cancel()
        try? session.connection.close().wait()
        try? filesSession?.connection.close().wait()
    }

    /// What `sslmode` asks for: TLS required or only preferred, and its settings; nil for none.
    private static func tls(mode: String, rootCertificate: String?, path: String) throws
        -> (required: Bool, configuration: TLSConfiguration)?
    {
        var configuration = TLSConfiguration.makeClientConfiguration()
        switch mode {
        case "disable": return nil
        case "allow", "prefer", "require":
            configuration.certificateVerification = .none
        case "verify-ca", "verify-full":
            configuration.certificateVerification = mode == "verify-ca" ? .noHostnameVerification : .fullVerification
            if let rootCertificate { configuration.trustRoots = .file(rootCertificate) }
        default:
            throw StoreError.cannotOpen(
                path: path, reason: "sslmode=\(mode) is not one of disable, prefer, require, verify-ca, verify-full")
        }
        return (mode == "require" || mode.hasPrefix("verify"), configuration)
    }

    /// Runs one statement on the first connection.
    @discardableResult
    func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings()) throws -> StatementAnswer {
        try session.run(sql, binds)
    }

    /// What PostgreSQL said, without the query.
    static func message(_ error: any Error) -> String {
        if let error = error as? PSQLError {
            if let server = error.serverInfo, let message = server[.message] {
                return message + (server[.detail].map { " (\($0))" } ?? "")
            }
            if error.code == .connectionError {
                let cause = error.underlying.map { String(describing: $0) } ?? ""
                if cause.contains("CERTIFICATE_VERIFY_FAILED") {
                    return
                        "the server's TLS certificate is not trusted (sslrootcert=FILE names the one to trust; sslmode=require encrypts without checking it)"
                }
                // A socket folder without a server's socket in it.
                if cause.contains("No such file or directory") || cause.contains("errno: 2)") {
                    return "no PostgreSQL server's socket there (no such file: is the server running, on that port?)"
                }
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

    /// Creates the schema on a fresh library and applies the migrations it lacks (`applied`:
    /// those it holds, when known).
    private func migrate(fresh: Bool, applied: [String]?) throws {
        // Users the library was granted to can't create schemas: only a new library is created.
        if fresh {
            try run("CREATE SCHEMA IF NOT EXISTS margin")
            try run(
                "CREATE TABLE IF NOT EXISTS margin.migrations (name text PRIMARY KEY, \"appliedAt\" timestamptz NOT NULL DEFAULT now())"
            )
        }
        let applied = try applied ?? appliedMigrations()
        let known = Set(PostgresMigrations.all.map(\.name))
        guard applied.allSatisfy(known.contains) else { throw StoreError.newerSchema(path: path ?? "postgres") }
        for migration in PostgresMigrations.all where !applied.contains(migration.name) {
            try session.transaction(readOnly: false) {
                // One statement at a time: the extended protocol takes one per query.
                for statement in PostgresMigrations.statements(migration.sql) {
                    let trimmed = statement.trimmingCharacters(in: .whitespacesAndNewlines)
                    if !trimmed.isEmpty { try run(trimmed) }
                }
                if migration.name == "v13-language" { try detectLanguages() }
                if migration.name == "v14-cjk" { try indexPairs() }
                if migration.name == "v15-kana" { try composeKana() }
                if migration.name == "v16-word-pairs" { try pairWords() }
                var binds = PostgresBindings()
                binds.append(migration.name)
                try run("INSERT INTO margin.migrations (name) VALUES ($1)", binds)
            }
        }
    }

    /// Each indexed book's language, told from its pages' text (`Languages.detect`), in the
    /// migration that adds it (v13), as its role.
    private func detectLanguages() throws {
        for book in try run("SELECT id FROM margin.book WHERE \"indexedAt\" IS NOT NULL ORDER BY id").rows {
            let id = try book.decode(Int64.self)
            var binds = PostgresBindings()
            binds.append(id)
            let texts = try run(
                "SELECT text FROM margin.page WHERE \"bookId\" = $1 ORDER BY number LIMIT 200", binds
            ).rows.map { try $0.decode(String.self) }
            guard let lang = Languages.detect(texts) else { continue }
            var update = PostgresBindings()
            update.append(lang)
            update.append(id)
            try run("UPDATE margin.book SET lang = $1 WHERE id = $2", update)
        }
    }

    /// v14's work (see `PostgresMigrations`): `page_words` splits and pairs as `indexWords` does,
    /// by classes of scalars made here from Swift's (`PostgresWordClasses`); text holding Chinese
    /// or Japanese letters is folded again (a page's words and length follow), and the words of
    /// every page holding a scalar past ASCII are worked out again.
    private func indexPairs() throws {
        let pairs = PostgresWordClasses.bracket(isBigramScalar)
        let separators = PostgresWordClasses.separators
        try run(
            """
            CREATE OR REPLACE FUNCTION margin.page_words(norm text) RETURNS TABLE (word text, count integer)
                LANGUAGE sql IMMUTABLE AS $$ SELECT w, count(*)::integer FROM (
                    SELECT w FROM regexp_split_to_table(norm, '\(separators)+') w
                    UNION ALL
                    SELECT CASE WHEN length(r[1]) = 1 THEN r[1] ELSE substr(r[1], i, 2) END
                        FROM regexp_matches(norm, '\(pairs)+', 'g') r, generate_series(1, greatest(length(r[1]) - 1, 1)) i
                ) AS x WHERE w <> '' GROUP BY w $$
            """)
        try foldAgain(holding: pairs)
        let past = "p.norm ~ '[^\\x01-\\x7f]'"
        try run("DELETE FROM margin.page_word w USING margin.page p WHERE w.page = p.id AND \(past)")
        try run(
            "INSERT INTO margin.word(word) SELECT DISTINCT w.word FROM margin.page p, margin.page_words(p.norm) w "
                + "WHERE \(past) ORDER BY 1 ON CONFLICT DO NOTHING")
        try run(
            "INSERT INTO margin.page_word(word, page, count) SELECT w.word, p.id, w.count "
                + "FROM margin.page p, margin.page_words(p.norm) w WHERE \(past)")
        try forgetUnheldWords()
    }

    /// The folded text of the pages (their words and length follow), highlights and memos whose
    /// text holds a match of the regular expression `pattern`, made again by `folded`.
    private func foldAgain(holding pattern: String) throws {
        var holding = PostgresBindings()
        holding.append(pattern)
        for row in try run("SELECT id, text FROM margin.page WHERE text ~ $1", holding).rows {
            let (id, text) = try row.decode((Int64, String).self)
            let norm = folded(text)
            var binds = PostgresBindings()
            binds.append(norm)
            binds.append(Int64(indexWords(norm.unicodeScalars).count))
            binds.append(id)
            try run("UPDATE margin.page SET norm = $1, words = $2 WHERE id = $3", binds)
        }
        for (table, text) in [("highlight", "text || ' ' || coalesce(note, '')"), ("memo", "text")] {
            for row in try run("SELECT id, \(text) FROM margin.\(table) WHERE \(text) ~ $1", holding).rows {
                let (id, text) = try row.decode((Int64, String).self)
                var binds = PostgresBindings()
                binds.append(folded(text))
                binds.append(id)
                try run("UPDATE margin.\(table) SET norm = $1 WHERE id = $2", binds)
            }
        }
    }

    /// v16's work (see `PostgresMigrations`): `page_pairs` splits a page's folded text where
    /// `page_words` does and hashes each two words side by side (`word_pair`); the trigger
    /// `pair_page` sets a page's pairs from its text as the row is written (a writer's own are
    /// replaced: an update of the text or the pairs makes them again); every page's are made
    /// first, then indexed.
    private func pairWords() throws {
        try run(
            """
            CREATE FUNCTION margin.page_pairs(norm text) RETURNS integer[] LANGUAGE sql IMMUTABLE PARALLEL SAFE
                AS $$ SELECT coalesce(array_agg(DISTINCT margin.word_pair(w, next)), '{}') FROM (
                    SELECT w, lead(w) OVER (ORDER BY i) AS next
                    FROM regexp_split_to_table(norm, '\(PostgresWordClasses.separators)+') WITH ORDINALITY AS t(w, i)
                    WHERE w <> '') AS x WHERE next IS NOT NULL $$
            """)
        try run(
            """
            CREATE FUNCTION margin.pair_page() RETURNS trigger LANGUAGE plpgsql AS $$
            BEGIN
                IF TG_OP = 'UPDATE' AND NEW.norm IS NOT DISTINCT FROM OLD.norm
                    AND NEW.pairs IS NOT DISTINCT FROM OLD.pairs THEN RETURN NEW; END IF;
                NEW.pairs := margin.page_pairs(NEW.norm);
                RETURN NEW;
            END $$
            """)
        try run("UPDATE margin.page SET pairs = margin.page_pairs(norm)")
        try run(
            "CREATE TRIGGER page_pairs BEFORE INSERT OR UPDATE OF norm, pairs ON margin.page "
                + "FOR EACH ROW EXECUTE FUNCTION margin.pair_page()")
        // Not analyzed here: statistics of an empty table (a new library) would have the
        // plans of `db copy`'s foreign-key checks read the whole table for each page written
        // (17 ms a page and growing, 4.7 unanalyzed: 974 s for the bench library, not 55).
        try run("CREATE INDEX page_pairs ON margin.page USING gin (pairs)")
    }

    /// v15's work (see `PostgresMigrations`): text holding a voicing mark written apart folded
    /// again (`KanaVoicing`); the words no page holds any more leave the vocabulary.
    private func composeKana() throws {
        try foldAgain(holding: "[" + String(String.UnicodeScalarView(KanaVoicing.marks)) + "]")
        try forgetUnheldWords()
    }

    /// The words no page holds any more out of the vocabulary; the statistics made again.
    private func forgetUnheldWords() throws {
        try run(
            "DELETE FROM margin.word WHERE NOT EXISTS (SELECT 1 FROM margin.page_word WHERE page_word.word = word.word)"
        )
        try run("ANALYZE margin.word")
        try run("ANALYZE margin.page_word")
    }

    private static let appliedQuery = "SELECT name FROM margin.migrations ORDER BY \"appliedAt\", name"

    private func appliedMigrations() throws -> [String] {
        try run(Self.appliedQuery).rows.map { try $0.decode(String.self) }
    }

    // MARK: LibraryStore

    public func finishWriting() {}

    public func schemaStatus() throws -> SchemaStatus {
        let applied = try session.turn.withLock { try appliedMigrations() }
        let all = PostgresMigrations.all.map(\.name)
        return SchemaStatus(
            version: applied.count, latest: all.count, applied: applied, pending: all.filter { !applied.contains($0) })
    }

    public func integrityReport() throws -> IntegrityReport {
        // PostgreSQL keeps its own pages and foreign keys whole; what can be checked from here is
        // that every table answers.
        try session.turn.withLock {
            for table in PostgresMigrations.textColumns.keys.sorted() { try run("SELECT 1 FROM \"\(table)\" LIMIT 1") }
        }
        return IntegrityReport(integrity: ["ok"], foreignKeyViolations: [])
    }

    public func writeCounts() throws -> (recorded: Int?, database: Int) { (nil, 0) }
}

extension PostgresLibraryDatabase {
    /// Brings PostgreSQL's statistics and visibility map of the tables a search reads up to date,
    /// as autovacuum does within minutes: after `db copy` writes a library at once, a search's
    /// plans would guess until then (and the library's average page length is read from the
    /// pages, not from an index of them). Tables this role does not own are left to autovacuum.
    public func settle() throws {
        session.turn.lock()
        defer { session.turn.unlock() }
        try run("VACUUM (ANALYZE) margin.page, margin.page_word, margin.word")
    }

    /// Lets `role` use the library: books, pages and PDFs to read and write, annotations to
    /// add, and its own annotations to change (row-level security keeps the others' private
    /// ones from it), in this schema's tables today and in the ones later migrations add.
    public func grant(_ role: String) throws {
        try session.transaction(readOnly: false) {
            var binds = PostgresBindings()
            binds.append(role)
            guard try run("SELECT 1 FROM pg_roles WHERE rolname = $1", binds).rows.first != nil else {
                throw MarginError.invalidArgument(
                    "there is no PostgreSQL role '\(role)': create it first (CREATE ROLE \(role) LOGIN)")
            }
            let name = "\"" + role.replacingOccurrences(of: "\"", with: "\"\"") + "\""
            for statement in [
                "GRANT USAGE ON SCHEMA margin TO \(name)",
                "GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA margin TO \(name)",
                "REVOKE INSERT, UPDATE, DELETE ON margin.migrations FROM \(name)",
                "GRANT USAGE, SELECT ON ALL SEQUENCES IN SCHEMA margin TO \(name)",
                "GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA margin TO \(name)",
                "ALTER DEFAULT PRIVILEGES IN SCHEMA margin GRANT SELECT, INSERT, UPDATE, DELETE ON TABLES TO \(name)",
                "ALTER DEFAULT PRIVILEGES IN SCHEMA margin GRANT USAGE, SELECT ON SEQUENCES TO \(name)",
            ] {
                try run(statement)
            }
        }
    }
}

/// One connection and its statements: the first connection, or one leased from the pool for
/// a transaction.
final class PostgresSession: @unchecked Sendable {
    let connection: PostgresConnection
    let logger: Logger
    let path: String
    /// One transaction at a time on the connection.
    let turn = NSLock()
    /// Whether a transaction is open on the connection (`inTransaction`), and whether it has
    /// asked PostgreSQL for plans made for any arguments (`plansForAny`): both only touched by
    /// the thread running the transaction.
    private var transactionOpen = false
    private var plansForAny = false
    /// The statements sent on the connection (each a round trip to the server), for tests.
    private(set) var statementsSent = 0

    init(connection: PostgresConnection, logger: Logger, path: String) {
        self.connection = connection
        self.logger = logger
        self.path = path
    }

    /// Runs one statement and returns its rows. The store's port is synchronous (its SQLite
    /// backend, GRDB, runs a transaction's statements on the thread that holds the database),
    /// so a statement is waited for here: on a thread of the store's queue, never on an event
    /// loop (which would stop every connection served by it) — checked before each wait.
    @discardableResult
    func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), kinds: String? = nil) throws
        -> StatementAnswer
    {
        try wait(for: send(sql, binds, kinds: kinds))
    }

    /// Sends one statement; its answer is waited for with `wait(for:)`. A statement on a
    /// connection the server closed (a restart, an outage) is never answered: it is refused at
    /// once, and one running when the connection closes fails then. A read whose arguments'
    /// types its text fixes (`kinds`, as `SQLBuilder` writes them) may run as a statement
    /// prepared on this connection (`PreparedStatements`).
    func send(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), kinds: String? = nil) throws
        -> PendingAnswer
    {
        connection.eventLoop.preconditionNotInEventLoop()
        guard !connection.isClosed else { throw StoreError.unreachable(path: path, reason: Self.lost) }
        statementsSent += 1
        if let kinds, let name = PreparedStatements.shared.name(for: sql, kinds: kinds) {
            planFor(any: true)
            return PendingAnswer(prepared: name, sql: sql, kinds: kinds, binds: binds, on: connection, logger: logger)
        }
        // A write's plan hangs on no argument's value (a row's values, its id): planned for any.
        if binds.count > 0, PostgresStore.reads(sql) { planFor(any: false) }
        let answer = connection.query(PostgresQuery(unsafeSQL: sql, binds: binds), logger: logger)
        return PendingAnswer(answer.map { StatementAnswer(rows: $0.rows, affected: $0.metadata.rows) })
    }

    /// Within a transaction, has PostgreSQL plan the statements that follow for any arguments
    /// (`any`), or for each statement's own. A prepared statement's form fixes its plan
    /// (`PreparedStatements`), yet PostgreSQL plans it again for each run's arguments whenever
    /// its estimate for a plan for any costs more, as it mostly does: for "gradient descent" in
    /// `serve` planning took 1.5 ms of the 2.1 of PostgreSQL's work (the phrase's statement: 0.3–0.9
    /// ms planned, 0.13 run). So every connection plans for any arguments from its start
    /// (`startupParameters`), and before a read with arguments that is not prepared (one
    /// finding a term in the text) the transaction asks for plans of its own (`SET LOCAL
    /// plan_cache_mode`, which its end undoes), before the next prepared one for any again. Sent
    /// without waiting, in order with the statements; yet each is a round trip of its own
    /// (PostgresNIO sends a connection's next statement once the last is answered).
    /// `MARGIN_PLAIN=generic-plans` leaves PostgreSQL's choice alone.
    private func planFor(any: Bool) {
        guard Self.genericPlans, transactionOpen, any != plansForAny else { return }
        plansForAny = any
        statementsSent += 1
        _ = connection.query(
            PostgresQuery(unsafeSQL: "SET LOCAL plan_cache_mode = \(any ? "force_generic_plan" : "auto")"),
            logger: logger)
    }

    /// Whether prepared statements are planned for any arguments (unless `MARGIN_PLAIN` names
    /// `generic-plans`).
    static let genericPlans = FastPaths.isOn("generic-plans")

    /// The settings every connection starts with: the schema's name first, and plans made for
    /// any arguments (`planFor(any:)`). Asked of each transaction instead, it was a round trip
    /// more for each (a search makes 6 to 12): at 32 users of `serve`, each round trip costs
    /// `serve` and PostgreSQL about 0.19 ms of processor together.
    static let startupParameters =
        [("search_path", "margin, public")] + (genericPlans ? [("plan_cache_mode", "force_generic_plan")] : [])

    /// The answer to a statement sent, waited for on this thread: looked at every 200 ms while it
    /// runs (most answer within a few) whether the connection closed.
    func wait(for answer: PendingAnswer) throws -> StatementAnswer {
        var closedAt: DispatchTime?
        while true {
            if let result = answer.result(waitingUntil: .now() + .milliseconds(200)) {
                do { return try result.get() } catch { throw Self.storeError(error, path: path) }
            }
            guard connection.isClosed else { continue }
            // Closed: the answer comes now or never.
            let now = DispatchTime.now()
            if let closedAt, now.uptimeNanoseconds - closedAt.uptimeNanoseconds > 1_000_000_000 {
                throw StoreError.unreachable(path: path, reason: Self.lost)
            }
            closedAt = closedAt ?? now
        }
    }

    static let lost = "the connection to the PostgreSQL server was lost"

    /// PostgreSQL's error as the store says it: a lost race to retry, or a failure.
    static func storeError(_ error: any Error, path: String) -> any Error {
        if let error = error as? StoreError { return error }
        // The connection itself failing under a statement (a server restarting closes it, over
        // TLS without its closing message): the server can't be reached, as a closed one.
        if error is ChannelError || error is IOError || error is NIOSSLError {
            return StoreError.unreachable(path: path, reason: lost)
        }
        if let error = error as? PSQLError {
            // Class 08, a connection exception; class 57, the server shutting down or starting.
            if let code = error.serverInfo?[.sqlState], code.hasPrefix("08") || code.hasPrefix("57") {
                return StoreError.unreachable(path: path, reason: PostgresLibraryDatabase.message(error))
            }
            if [.serverClosedConnection, .clientClosedConnection, .uncleanShutdown].contains(error.code) {
                return StoreError.unreachable(path: path, reason: lost)
            }
            if error.code == .connectionError {
                return StoreError.unreachable(path: path, reason: PostgresLibraryDatabase.message(error))
            }
        }
        let message = PostgresLibraryDatabase.message(error)
        if let code = (error as? PSQLError)?.serverInfo?[.sqlState], PostgresConflict.codes.contains(code) {
            return PostgresConflict(message: message)
        }
        if let error = error as? PSQLError, PreparedStatements.isStale(error) {
            return PostgresConflict(message: message, readsToo: true)
        }
        return StoreError.failed(path: path, message: message)
    }

    /// Runs `body` in one transaction on this connection, committed when it returns.
    func transaction<T>(readOnly: Bool, _ body: () throws -> T) throws -> T {
        turn.lock()
        defer { turn.unlock() }
        return try inTransaction(readOnly: readOnly, body)
    }

    /// A transaction begun: PostgreSQL plans as the connection started (`startupParameters`)
    /// until asked otherwise.
    fileprivate func opened() {
        transactionOpen = true
        plansForAny = Self.genericPlans
    }

    /// The transaction ended (its `SET LOCAL`s with it).
    fileprivate func closed() {
        transactionOpen = false
        plansForAny = false
    }

    /// `transaction`, if no other is running on this connection now; else nil, at once.
    func transactionIfFree<T>(readOnly: Bool, _ body: () throws -> T) throws -> T? {
        guard turn.try() else { return nil }
        defer { turn.unlock() }
        return try inTransaction(readOnly: readOnly, body)
    }

    private func inTransaction<T>(readOnly: Bool, _ body: () throws -> T) throws -> T {
        if readOnly, !PostgresSession.awaitBoth { return try inReadTransaction(body) }
        try run(readOnly ? "BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY" : "BEGIN")
        opened()
        defer { closed() }
        do {
            let result = try body()
            try run("COMMIT")
            return result
        } catch {
            _ = try? run("ROLLBACK")
            throw error
        }
    }
}

extension PostgresSession {
    /// `MARGIN_PLAIN=read-round-trips` waits for a read's BEGIN and COMMIT as for a write's.
    static let awaitBoth = !FastPaths.isOn("read-round-trips")

    /// A read-only transaction whose BEGIN and COMMIT are sent without waiting for their answers:
    /// the connection runs its statements in the order sent, so every read runs inside the
    /// transaction, and a read-only COMMIT has nothing to make durable (the next statement on the
    /// connection waits behind it). Two round trips fewer for every read (a search makes 9).
    private func inReadTransaction<T>(_ body: () throws -> T) throws -> T {
        let begun = try send("BEGIN ISOLATION LEVEL REPEATABLE READ READ ONLY")
        opened()
        defer { closed() }
        do {
            let result = try body()
            // Answered before the first read was (when there was one): the reads were inside it.
            _ = try wait(for: begun)
            _ = try send("COMMIT")
            return result
        } catch {
            _ = try? run("ROLLBACK")
            throw error
        }
    }
}

/// A statement's answer to come. Its result is kept as the connection's event loop gives it,
/// and read here: `EventLoopFuture.wait()` would hand a task to the event loop and wait for it
/// to run, a round trip between two threads for every statement, once more after the answer.
final class PendingAnswer: @unchecked Sendable {
    private let lock = NSLock()
    private var answer: Result<StatementAnswer, any Error>?
    private let done = DispatchSemaphore(value: 0)

    init(_ future: EventLoopFuture<StatementAnswer>) {
        future.whenComplete { [self] result in
            lock.withLock { answer = result }
            done.signal()
        }
    }

    /// The result, once there is one; nil if none came by `deadline`.
    func result(waitingUntil deadline: DispatchTime) -> Result<StatementAnswer, any Error>? {
        if let answer = lock.withLock({ answer }) { return answer }
        guard done.wait(timeout: deadline) == .success else { return nil }
        // Given back for the next look (a result once there stays).
        done.signal()
        return lock.withLock { answer }
    }
}

/// A write that lost a race with another client's (the same new key inserted by both, a
/// serialization failure, a deadlock): PostgreSQL rolled it back, and running it again sees
/// the other write. The repository does that a few times before saying so.
struct PostgresConflict: Error {
    /// unique_violation, serialization_failure, deadlock_detected.
    static let codes: Set<String> = ["23505", "40001", "40P01"]
    let message: String
    /// Whether a read is run again too (a prepared statement the schema outdated, named anew).
    var readsToo = false
}

extension PostgresLibraryDatabase {
    /// Team libraries at `postgres://` and `postgresql://` URLs.
    public static let backend = LibraryBackend(schemes: ["postgres", "postgresql"]) { url, password, sharedToo in
        let team = try PostgresLibraryDatabase(url: url, password: password)
        if sharedToo { team.audience = .sharedToo }
        return team
    }
}

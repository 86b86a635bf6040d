import Foundation
import MarginCore
import PostgresNIO

/// A statement's answer: its rows, and how many rows it changed (an UPDATE's or DELETE's).
struct StatementAnswer: Sendable {
    var rows: [PostgresRow]
    var affected: Int?

    /// No rows: how a read sent ahead is answered while sending (`PostgresStore.sendAhead`).
    static let none = StatementAnswer(rows: [], affected: nil)
}

/// The reads a library runs again and again with other arguments (a book's row, the guides of
/// the books a search found, the scanned books' count), prepared: PostgreSQL parses each once on
/// a connection and, within a transaction, plans it once for any arguments (the transaction
/// asks for that before its first prepared statement: `PostgresSession.planFor(any:)`). Under
/// 32 users of `serve` parsing and planning took 16–18 % of the processor; the statements
/// prepared here are those whose plans do not hang on their arguments' values: record reads
/// (`SQLBuilder`), and the searches' statements over the page words whose form fixes their plan
/// (the words' look-ups, a ranked tier's, a phrase's by its pairs, the pages read by id), never
/// one finding a term in the text, whose best plan depends on how common the term is. A search
/// of no hit, "gradient descent": 2.2 → 1.6 ms of PostgreSQL's processor parsed once, 1.05 ms
/// planned once too.
///
/// A statement is prepared at its third run (`runsUnprepared`), under a name
/// of this process (`margin_1`, …), on each connection as it first runs there; at most
/// `limit` are, the rest run as before. `MARGIN_PLAIN=prepared` prepares none.
final class PreparedStatements: @unchecked Sendable {
    static let shared = PreparedStatements()

    /// Whether statements are prepared (unless `MARGIN_PLAIN` names `prepared`).
    static let isOn = FastPaths.isOn("prepared")
    /// The statements named at most (each connection keeps those it ran until it closes).
    static let limit = 256
    /// The runs of a statement before it is prepared: preparing takes a round trip of its own,
    /// a loss for a command that runs a statement twice (2 to 4 ms in `margin search`).
    static let runsUnprepared = 2
    /// Names a statement may be given (a new one after each failure) before it runs unprepared.
    static let renamings = 8

    private struct Key: Hashable {
        let sql: String
        let kinds: String
    }

    private let lock = NSLock()
    private var runs = [Key: Int]()
    private var names = [Key: String]()
    private var failures = [Key: Int]()
    private var named = 0

    /// The name `sql` (with arguments of `kinds`) runs prepared under, nil to run it as it is.
    func name(for sql: String, kinds: String) -> String? {
        guard Self.isOn else { return nil }
        let key = Key(sql: sql, kinds: kinds)
        return lock.withLock {
            if let name = names[key] { return name }
            guard named < Self.limit, failures[key, default: 0] < Self.renamings else { return nil }
            let run = runs[key, default: 0] + 1
            guard run > Self.runsUnprepared else {
                // Forgotten now and then: statements run once or twice don't pile up.
                if runs.count >= 4 * Self.limit { runs.removeAll() }
                runs[key] = run
                return nil
            }
            runs[key] = nil
            named += 1
            let name = "margin_\(named)"
            names[key] = name
            return name
        }
    }

    /// After PostgreSQL refused a prepared statement: it is named anew (a connection keeps a
    /// preparation that failed as failed, under its name), so that each connection prepares
    /// it again when it next runs; after `renamings` refusals it runs unprepared.
    func refused(_ sql: String, kinds: String, name: String) {
        let key = Key(sql: sql, kinds: kinds)
        lock.withLock {
            guard names[key] == name else { return }
            names[key] = nil
            failures[key, default: 0] += 1
            runs[key] = Self.runsUnprepared
        }
    }

    /// PostgreSQL's errors that say a prepared statement no longer fits the schema (changed by
    /// another client since: "cached plan must not change result type"), is gone, or its name
    /// is taken (a connection pooler between, handing on sessions): the transaction is run
    /// again, the statement named anew.
    static func isStale(_ error: PSQLError) -> Bool {
        guard let code = error.serverInfo?[.sqlState] else { return false }
        return code == "26000" || code == "42P05"
            || (code == "0A000" && error.serverInfo?[.message]?.contains("cached plan") == true)
    }
}

/// A statement of `PreparedStatements`: its name and text come from the task running it, as
/// PostgresNIO's prepared statements name their text statically (one type each).
struct NamedStatement: PostgresPreparedStatement {
    struct Text: Sendable {
        var name = ""
        var sql = ""
    }

    @TaskLocal static var text = Text()

    static var name: String { text.name }
    static var sql: String { text.sql }

    typealias Row = PostgresRow

    let bindings: PostgresBindings

    func makeBindings() -> PostgresBindings { bindings }
    func decodeRow(_ row: PostgresRow) -> PostgresRow { row }
}

extension PendingAnswer {
    /// The answer to statement `name` (`sql`, prepared on `connection` first if it is not yet),
    /// run with `binds`. PostgresNIO runs prepared statements only from a task: this one starts
    /// on this thread and sends the statement before it first waits, so statements reach the
    /// connection in the order they were sent (a transaction's reads sent ahead, its COMMIT).
    convenience init(
        prepared name: String, sql: String, kinds: String, binds: PostgresBindings, on connection: PostgresConnection,
        logger: Logger
    ) {
        let promise = connection.eventLoop.makePromise(of: StatementAnswer.self)
        self.init(promise.futureResult)
        // On the connection's event loop once it waits: the answer comes there, and is read and
        // handed on there (not on a thread of the cooperative pool between the event loop and
        // the thread waiting: two thread switches more for every statement).
        Task.immediate(executorPreference: Self.onLoop ? EventLoopTaskExecutor(connection.eventLoop) : nil) {
            do {
                let rows = try await NamedStatement.$text.withValue(NamedStatement.Text(name: name, sql: sql)) {
                    try await connection.execute(NamedStatement(bindings: binds), logger: logger)
                }
                var all = [PostgresRow]()
                for try await row in rows { all.append(row) }
                promise.succeed(StatementAnswer(rows: all, affected: nil))
            } catch {
                if (error as? PSQLError)?.serverInfo != nil {
                    PreparedStatements.shared.refused(sql, kinds: kinds, name: name)
                }
                promise.fail(error)
            }
        }
    }

    /// Whether a prepared statement's task runs on its connection's event loop (unless
    /// `MARGIN_PLAIN` names `statement-loop`).
    static let onLoop = FastPaths.isOn("statement-loop")
}

/// Runs a task's jobs on an event loop (as a task's preferred executor).
final class EventLoopTaskExecutor: TaskExecutor, @unchecked Sendable {
    let loop: any EventLoop

    init(_ loop: any EventLoop) { self.loop = loop }

    func enqueue(_ job: consuming ExecutorJob) {
        let job = UnownedJob(job)
        loop.execute { job.runSynchronously(on: self.asUnownedTaskExecutor()) }
    }
}

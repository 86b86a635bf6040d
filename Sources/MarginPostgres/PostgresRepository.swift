import Foundation
import MarginCore
import PostgresNIO

/// The PostgreSQL implementation of `Repository`: each read or write is one transaction on a
/// connection leased from the pool, run on a thread of its own (the store's calls wait for
/// PostgreSQL there, never on a cooperative thread).
struct PostgresRepository: Repository {
    let database: PostgresLibraryDatabase

    func read<T: Sendable>(_ body: @escaping @Sendable (any StoreReader) throws -> T) async throws -> T {
        try await perform(readOnly: true) { try body($0) }
    }

    /// Times a write that lost a race is tried before the conflict is reported.
    static let attempts = 32

    func write<T: Sendable>(_ body: @escaping @Sendable (any StoreWriter) throws -> T) async throws -> T {
        try await perform(readOnly: false) { try body($0) }
    }

    private func perform<T: Sendable>(readOnly: Bool, _ body: @escaping @Sendable (PostgresStore) throws -> T)
        async throws -> T
    {
        var attempt = 0
        var reconnected = false
        while true {
            do {
                return try await attemptTransaction(readOnly: readOnly, body)
            } catch StoreError.unreachable(let path, let reason) {
                // A read whose connection was lost (the server restarted) is read again once, on a
                // new connection; a write is not (its COMMIT may have been the statement lost).
                guard readOnly, !reconnected, !reason.hasPrefix(noConnection) else {
                    throw StoreError.unreachable(path: path, reason: reason)
                }
                reconnected = true
            } catch let conflict as PostgresConflict {
                // Another client's write won the race: run the transaction again on what it wrote.
                // Each round at least one of the clients racing for the same row (a new book's
                // citation key, say) wins, so as many rounds as clients settle it.
                attempt += 1
                guard !readOnly || conflict.readsToo, attempt < Self.attempts else {
                    throw StoreError.failed(path: database.path ?? "postgres", message: conflict.message)
                }
                try await Task.sleep(for: .milliseconds(Int.random(in: 5...20) * min(attempt, 8)))
            }
        }
    }

    private func attemptTransaction<T: Sendable>(
        readOnly: Bool, _ body: @escaping @Sendable (PostgresStore) throws -> T
    ) async throws -> T {
        let database = self.database
        let audience = Audience.chosen ?? database.audience
        @Sendable func store(_ session: PostgresSession) -> PostgresStore {
            PostgresStore(
                session: session, user: database.user, audience: audience, statistics: database.statistics,
                memory: database.memory, readOnly: readOnly)
        }
        // The first connection when it is free (a command's one transaction at a time needs no
        // other), else one from the pool.
        let first = store(database.session)
        if !database.session.connection.isClosed,
            let done = try await database.blocking(
                reading: readOnly,
                {
                    try database.session.transactionIfFree(readOnly: readOnly) { try body(first) }
                })
        {
            return done
        }
        // Else a pooled connection, in a transaction as on the first (its BEGIN says the
        // isolation: one statement, not PostgresNIO's BEGIN and then a SET).
        let path = database.path ?? "postgres"
        do {
            return try await leased(path: path) { lease in
                try await (readOnly || !PostgresLibraryDatabase.writeLane ? database.client : database.writers)
                    .withConnection { connection in
                        lease.started(on: connection)
                        let session = PostgresSession(connection: connection, logger: database.logger, path: path)
                        let pooled = store(session)
                        return try await database.blocking(reading: readOnly) {
                            try session.transaction(readOnly: readOnly) { try body(pooled) }
                        }
                    }
            }
        } catch let error as PSQLError {
            throw PostgresSession.storeError(error, path: path)
        }
    }
}

/// How long a transaction waits for a pooled connection: the pool tries to connect meanwhile
/// (a server restarting), and a server that stays away is said, not waited for.
let leaseTimeout: Duration = .seconds(10)
/// How that is said.
let noConnection = "no connection to the PostgreSQL server"

/// The connection a transaction leased, once it has one.
final class Lease: @unchecked Sendable {
    private let lock = NSLock()
    private var connection: PostgresConnection?

    func started(on connection: PostgresConnection) { lock.withLock { self.connection = connection } }

    var state: (leased: Bool, closed: Bool) {
        lock.withLock { (connection != nil, connection?.isClosed ?? false) }
    }
}

/// Resumes a continuation once, whichever of its racers comes first.
private final class Once<T: Sendable>: @unchecked Sendable {
    private let lock = NSLock()
    private var continuation: CheckedContinuation<T, any Error>?

    init(_ continuation: CheckedContinuation<T, any Error>) { self.continuation = continuation }

    func resume(_ result: Result<T, any Error>) {
        lock.withLock {
            continuation?.resume(with: result)
            continuation = nil
        }
    }
}

/// `work`, given up when it hasn't leased a connection within `leaseTimeout`, or when its
/// connection has been closed for a second (PostgresNIO leaves a statement sent on a closed
/// connection unanswered): said as the database unreachable, the work cancelled and left to end.
private func leased<T: Sendable>(path: String, _ work: @escaping @Sendable (Lease) async throws -> T) async throws -> T
{
    let lease = Lease()
    let task = Task { try await work(lease) }
    let watch = Task { () -> String? in
        let start = ContinuousClock.now
        var closedAt: ContinuousClock.Instant?
        while true {
            try await Task.sleep(for: .milliseconds(250))
            let (leased, closed) = lease.state
            if !leased, ContinuousClock.now - start > leaseTimeout {
                return "\(noConnection) within \(leaseTimeout.components.seconds) s"
            }
            if closed {
                let since = closedAt ?? ContinuousClock.now
                closedAt = since
                if ContinuousClock.now - since > .seconds(1) { return PostgresSession.lost }
            }
        }
    }
    return try await withTaskCancellationHandler {
        try await withCheckedThrowingContinuation { continuation in
            let once = Once(continuation)
            Task {
                let result = await task.result
                watch.cancel()
                // Failing before it had a connection, the work failed to get one (the pool gives up
                // at the same 10 s the watch does, and may answer first): the database unreachable.
                if case .failure(let error) = result, !(error is StoreError), !(error is CancellationError),
                    !lease.state.leased
                {
                    once.resume(
                        .failure(
                            StoreError.unreachable(
                                path: path, reason: "\(noConnection) within \(leaseTimeout.components.seconds) s")))
                } else {
                    once.resume(result)
                }
            }
            Task {
                if let reason = try? await watch.value {
                    task.cancel()
                    once.resume(.failure(StoreError.unreachable(path: path, reason: reason)))
                }
            }
        }
    } onCancel: {
        task.cancel()
        watch.cancel()
    }
}

extension PostgresLibraryDatabase {
    /// Runs `work` on a thread of this library's own (it waits for PostgreSQL), never on a
    /// cooperative thread: a read's (`reading`) at a lower priority (`ReadPriority`), a write's
    /// not.
    fileprivate func blocking<T: Sendable>(
        reading: Bool, _ work: @escaping @Sendable () throws -> T
    ) async throws -> T {
        guard reading else { return try await writeThreads.runIfActive(work) }
        return try await threads.runIfActive {
            ReadPriority.lower()
            return try work()
        }
    }
}

/// The threads reading a library run 3 steps of niceness below the others (the writes', the
/// server's): a search keeps the processor for many milliseconds, an annotation saved needs it
/// for a few between its round trips to PostgreSQL, and waited behind the searches at each. At
/// 32 users of `serve` on two cores, annotate p50 18–24 → 13 ms, p99 51–102 → 35–38, requests/s
/// 551–583 → 545–562 (alternated runs of 15 s). `MARGIN_PLAIN=read-priority` leaves them as the
/// process is.
enum ReadPriority {
    static let isOn = FastPaths.isOn("read-priority")
    /// Steps of niceness below the process's.
    static let steps: Int32 = 3

    /// Lowers the calling thread's priority, once (Linux keeps a nice value for each thread, and
    /// `setpriority(PRIO_PROCESS, 0, …)` sets the caller's).
    static func lower() {
        guard isOn, Thread.current.threadDictionary[key] == nil else { return }
        Thread.current.threadDictionary[key] = true
        let which = __priority_which_t(PRIO_PROCESS.rawValue)
        errno = 0
        let nice = getpriority(which, 0)
        guard errno == 0 else { return }
        _ = setpriority(which, 0, min(19, nice + steps))
    }

    private static let key = "margin.read-priority"
}

/// Statements of one transaction, as one user: annotations are read as `audience` says (the
/// database's row-level security lets the user see at most their own and the shared ones), and
/// a book's `openedAt` is the user's own (table `reading`, through the view `my_book`).
struct PostgresStore: StoreWriter, TextIndex {
    let session: PostgresSession
    let user: String?
    let audience: Audience
    let statistics: PageStatistics
    /// What the library's reads found besides its pages, kept while its content stays.
    let memory: ContentMemory
    /// Whether the transaction only reads (one snapshot for all its statements).
    let readOnly: Bool
    /// The content's version in this transaction's snapshot, once asked.
    let version = SeenVersion()
    /// What this transaction's search counted of its candidate pages, so the count of the pages
    /// past the hits shown is not made twice.
    let counted = CountedCandidates()
    /// Reads sent ahead (`sendAhead`), answered when made.
    let sent = SentAhead()
    /// The titles and page labels of books this transaction read (`titles(of:)`).
    let shownBooks = ShownBooks()

    var textIndex: any TextIndex { self }

    /// Whether `sendAhead` sends (unless `MARGIN_PLAIN` names `send-ahead`).
    static let sendsAhead = FastPaths.isOn("send-ahead")

    /// Runs one statement: answered from what was sent ahead when it was (a write drops what
    /// was, its answers being from before it), sent and answered empty while sending ahead.
    /// `kinds`: the arguments' kinds, for a read that may run prepared (`PostgresSession.send`).
    @discardableResult
    func run(_ sql: String, _ binds: PostgresBindings = PostgresBindings(), kinds: String? = nil) throws
        -> StatementAnswer
    {
        let statement = SentAhead.Statement(sql: sql, binds: binds)
        if sent.sending {
            sent.keep(statement, try session.send(sql, binds, kinds: kinds))
            return StatementAnswer.none
        }
        if let pending = sent.take(statement) { return try session.wait(for: pending) }
        if !Self.reads(sql) { forgetReads() }
        return try session.run(sql, binds, kinds: kinds)
    }

    /// What a write makes stale: the reads sent ahead (answered from before it) and the books
    /// read.
    private func forgetReads() {
        if !sent.isEmpty { sent.drop() }
        shownBooks.forget()
    }

    /// Whether a statement of this store only reads: a query, alone or after common table
    /// expressions (its writes begin with their verb; a search's ranked tier begins `WITH`, and
    /// reads sent ahead of it wait for it, not again after).
    static func reads(_ sql: String) -> Bool {
        sql.hasPrefix("SELECT") || sql.hasPrefix("(SELECT") || sql.hasPrefix("WITH ")
    }

    @discardableResult func sendAhead(_ reads: (any StoreReader) throws -> Void) throws -> Bool {
        guard Self.sendsAhead, !sent.sending else { return false }
        sent.sending = true
        defer { sent.sending = false }
        try reads(self)
        // The books' facts no titles' statement took, sent on their own.
        if let facts = shownBooks.takeDeferred() {
            shownBooks.deferring = true
            defer { shownBooks.deferring = false }
            _ = try searchedBooks(facts.books, languages: facts.languages)
        }
        return true
    }

    /// The table (or view) a model is read from.
    private func source<M: Model>(_ type: M.Type) -> String {
        M.self == Book.self ? quoted("my_book") : quoted(M.entity)
    }

    /// The query with the audience's condition on annotations.
    private func shown<M: Model>(_ query: Query<M>) -> Query<M> {
        guard M.self is any Annotation.Type, let user else { return query }
        let mine = Predicate.compare("owner", .equal, .text(user))
        switch audience {
        case .mine: return query.filter(mine)
        case .sharedToo: return query.filter(mine || .compare("shared", .equal, .integer(1)))
        case .everything: return query
        }
    }

    // MARK: StoreReader

    /// Row-level security shows this user the shared annotations of others (never their private
    /// ones): asked past the audience, the owner of one of those.
    func hiddenAnnotationOwner(_ entity: String, id: Int64) throws -> String? {
        guard ["highlight", "memo", "bookmark"].contains(entity), let user else { return nil }
        var binds = PostgresBindings()
        binds.append(id)
        binds.append(user)
        return try run("SELECT owner FROM \(quoted(entity)) WHERE id = $1 AND owner <> $2", binds).rows.first?
            .decode(String.self)
    }

    func fetch<M: Model>(_ query: Query<M>) throws -> [M] {
        var sql = SQLBuilder(table: M.entity)
        let statement = "SELECT * FROM \(source(M.self))" + sql.clauses(shown(query), withOrder: true)
        return try run(statement, sql.binds, kinds: sql.kinds).rows.map { row in
            try M(from: ColumnDecoder(row: row.makeRandomAccess()))
        }
    }

    func count<M: Model>(_ query: Query<M>) throws -> Int {
        var sql = SQLBuilder(table: M.entity)
        let statement =
            "SELECT count(*) FROM \(source(M.self))" + sql.clauses(shown(query).limit(nil), withOrder: false)
        return Int(try run(statement, sql.binds, kinds: sql.kinds).rows.first?.decode(Int64.self) ?? 0)
    }

    func sum<M: Model>(_ field: Field<M, Int>, _ query: Query<M>) throws -> Int {
        var sql = SQLBuilder(table: M.entity)
        let statement =
            "SELECT coalesce(sum(\(quoted(field.name))), 0)::bigint FROM \(source(M.self))"
            + sql.clauses(shown(query).limit(nil), withOrder: false)
        return Int(try run(statement, sql.binds).rows.first?.decode(Int64.self) ?? 0)
    }

    func countAndSum<M: Model>(_ field: Field<M, Int>, _ query: Query<M>) throws -> (count: Int, sum: Int) {
        var sql = SQLBuilder(table: M.entity)
        let statement =
            "SELECT count(*), coalesce(sum(\(quoted(field.name))), 0)::bigint FROM \(source(M.self))"
            + sql.clauses(shown(query).limit(nil), withOrder: false)
        guard let row = try run(statement, sql.binds, kinds: sql.kinds).rows.first else { return (0, 0) }
        let (count, sum) = try row.decode((Int64, Int64).self)
        return (Int(count), Int(sum))
    }

    /// The titles, and the page labels beside them (`pageLabels(of:)` asks for those of the same
    /// books or fewer next: a search's hits), and what a search tells of the books it searched
    /// when that was asked for while sending ahead (`searchedBooks`): one statement, not three.
    /// PostgresNIO sends a connection's next statement once the last is answered, so each is a
    /// round trip to the server of its own, sent ahead or not.
    func titles(of books: [Int64]) throws -> [Int64: String] {
        guard !books.isEmpty else { return [:] }
        if !sent.sending, let known = shownBooks.titles(of: books) { return known }
        // Known from earlier transactions: not sent ahead, read when their version is this one's.
        if sendingKnown(memory.knows(books: books)) { return [:] }
        if shownBooks.sentCovering(books) == nil, let known = try remembered({ memory.titles(of: books, at: $0) }) {
            shownBooks.keep(books, titles: known.titles, labels: known.labels)
            return known.titles
        }
        // With the books' facts deferred while sending, or those sent with these books before.
        let facts = sent.sending ? shownBooks.takeDeferred() : shownBooks.factsSent(with: books)
        var sql = SQLBuilder(table: Book.entity)
        let from = facts.map { "(\(factsStatement($0, &sql))) AS f LEFT JOIN (" } ?? ""
        let ids = sql.bind(array: books)
        // Two columns of the books, not the 28 of a book's row (20 books: 0.39 → 0.05 ms in
        // PostgreSQL), and the labels of their guides, not their outlines.
        let statement =
            "SELECT b.id, b.title, g.labels\(facts == nil ? "" : ", f.*") FROM \(from)\(source(Book.self)) b "
            + "LEFT JOIN \(source(BookGuide.self)) g ON g.\"bookId\" = b.id AND g.labels IS NOT NULL"
            + (facts == nil ? " WHERE b.id = ANY(\(ids))" : ") ON b.id = ANY(\(ids))")
        let rows = try run(statement, sql.binds, kinds: sql.kinds).rows
        if sent.sending {
            shownBooks.sent(books, facts: facts)
            return [:]
        }
        var titles = [Int64: String]()
        var labels = [Int64: [String]]()
        var told: SearchedBooks?
        for row in rows {
            let columns = row.makeRandomAccess()
            if let book = try columns[0].decode(Int64?.self) {
                if titles[book] == nil { titles[book] = try columns[1].decode(String.self) }
                if labels[book] == nil, let json = try columns[2].decode(String?.self),
                    let read = BookGuide.labels(json: json)
                {
                    labels[book] = read
                }
            }
            if facts != nil, told == nil {
                told = try Self.searched(
                    columns[3].decode(Int64.self), columns[4].decode(Int64.self), columns[5].decode(String?.self),
                    columns[6].decode([String]?.self))
            }
        }
        shownBooks.keep(books, titles: titles, labels: labels)
        if let facts, let told { shownBooks.keep(facts, told) }
        try remember { seen in
            memory.keep(books: books, titles: titles, labels: labels, at: seen)
            if let facts, let told { memory.keep(facts: facts, told, at: seen) }
        }
        return titles
    }

    func pageLabels(of books: [Int64]) throws -> [Int64: [String]] {
        guard !books.isEmpty else { return [:] }
        if sent.sending, shownBooks.covers(books) || sendingKnown(memory.knows(books: books)) { return [:] }
        if !sent.sending {
            if let known = shownBooks.labels(of: books) { return known }
            // The titles' statement sent ahead for them, answered now.
            if let asked = shownBooks.sentCovering(books) {
                _ = try titles(of: asked)
                if let known = shownBooks.labels(of: books) { return known }
            }
            if let known = try remembered({ memory.titles(of: books, at: $0) }) { return known.labels }
        }
        var binds = PostgresBindings()
        binds.append(books)
        // Not the outlines beside them (the 14 books of a search for "matrix": 0.31–0.57 → 0.04 ms
        // in PostgreSQL, and no outline received here).
        let rows = try run(
            "SELECT \"bookId\", labels FROM \(source(BookGuide.self)) WHERE \"bookId\" = ANY($1) AND labels IS NOT NULL",
            binds, kinds: "[Int64]"
        ).rows
        return Dictionary(
            try rows.compactMap { row in
                let (book, labels) = try row.decode((Int64, String).self)
                return BookGuide.labels(json: labels).map { (book, $0) }
            }, uniquingKeysWith: { a, _ in a })
    }

    /// Asked while sending ahead, it waits for the titles' statement that follows (`titles(of:)`)
    /// to ride with it, or is sent on its own when the sending ends without one.
    func searchedBooks(_ books: [Int64]?, languages: Bool) throws -> SearchedBooks {
        let asked = ShownBooks.Facts(books: books, languages: languages)
        if let known = shownBooks.facts(asked) { return known }
        // Known from earlier transactions: not sent ahead (nor deferred), read when their version
        // is this one's.
        if sendingKnown(memory.knows(facts: asked)) { return SearchedBooks() }
        if shownBooks.wordsSent(withFacts: asked) == nil, shownBooks.titlesSent(withFacts: asked) == nil,
            let known = try remembered({ memory.facts(asked, at: $0) })
        {
            return known
        }
        // Sent with the look-up of a search's words (`lookAhead`): answered with it.
        if let terms = shownBooks.wordsSent(withFacts: asked) {
            if sent.sending { return SearchedBooks() }
            _ = try wordTerms(terms)
            if let known = shownBooks.facts(asked) { return known }
        }
        if sent.sending, !shownBooks.deferring {
            shownBooks.deferFacts(asked)
            return SearchedBooks()
        }
        if !sent.sending, let with = shownBooks.titlesSent(withFacts: asked) {
            _ = try titles(of: with)
            if let known = shownBooks.facts(asked) { return known }
        }
        var sql = SQLBuilder(table: Book.entity)
        let statement = factsStatement(asked, &sql)
        guard let row = try run(statement, sql.binds, kinds: sql.kinds).rows.first else { return SearchedBooks() }
        let (count, pages, title, found) = try row.decode((Int64, Int64, String?, [String]?).self)
        let told = Self.searched(count, pages, title, found)
        try remember { memory.keep(facts: asked, told, at: $0) }
        return told
    }

    /// The statement of `searchedBooks`, its arguments bound in `sql`. One scan of the books: the
    /// title of the one scanned book, when there is one, is the least of theirs.
    func factsStatement(_ facts: ShownBooks.Facts, _ sql: inout SQLBuilder) -> String {
        let searched = facts.books.map { Query<Book>().filter(Book.Fields.id.isIn($0)) } ?? Query<Book>()
        let scanned = "FILTER (WHERE \"textlessPages\" > 0)"
        return "SELECT count(*) \(scanned), coalesce(sum(\"textlessPages\") \(scanned), 0)::bigint, CASE WHEN "
            + "count(*) \(scanned) = 1 THEN min(title) \(scanned) END, "
            + (facts.languages ? "array_agg(DISTINCT lang) FILTER (WHERE lang IS NOT NULL)" : "NULL::text[]")
            + " FROM \(source(Book.self))" + sql.clauses(searched, withOrder: false)
    }

    static func searched(_ count: Int64, _ pages: Int64, _ title: String?, _ languages: [String]?)
        -> SearchedBooks
    {
        SearchedBooks(
            textlessBooks: Int(count), textlessPages: Int(pages), textlessTitle: title,
            languages: (languages ?? []).sorted())
    }

    func distinct<M: Model>(_ field: Field<M, String?>, _ query: Query<M>) throws -> [String] {
        var sql = SQLBuilder(table: M.entity)
        let statement =
            "SELECT DISTINCT \(quoted(field.name)) FROM \(source(M.self))"
            + sql.clauses(shown(query).limit(nil).filter(.not(field.isNull)), withOrder: false)
        return try run(statement, sql.binds, kinds: sql.kinds).rows.map { try $0.decode(String.self) }
    }

    // MARK: StoreWriter

    /// Where a table's unique key is wider than the model's natural key: a source's path is one
    /// per member (`scope`, computed by the database), so an upsert conflicts on the three.
    static let conflictKeys: [String: [String]] = ["source": ["bookId", "url", "scope"]]

    func insert<M: Model>(_ model: inout M) throws {
        counted.forget()  // the pages may change
        let columns = try storedColumns(model).filter { $0.name != "id" || model.id != nil }
        var binds = PostgresBindings()
        for column in columns { column.value.bind(into: &binds) }
        let names = columns.map { quoted($0.name) }.joined(separator: ", ")
        let values = columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        // Who made it is the database's answer: the row comes back whole for annotations and books.
        guard model is any Annotation || model is Book else {
            let statement = "INSERT INTO \(quoted(M.entity)) (\(names)) VALUES (\(values)) RETURNING id"
            model.id = try run(statement, binds).rows.first?.decode(Int64.self)
            return
        }
        let statement = "INSERT INTO \(quoted(M.entity)) (\(names)) VALUES (\(values)) RETURNING *"
        guard let row = try run(statement, binds).rows.first else { return }
        model = try written(row, model)
    }

    func update<M: Model>(_ model: M) throws {
        counted.forget()  // the pages may change
        guard let id = model.id else { return }
        let columns = try storedColumns(model).filter { $0.name != "id" }
        var binds = PostgresBindings()
        for column in columns { column.value.bind(into: &binds) }
        binds.append(id)
        let assignments = columns.enumerated().map { "\(quoted($0.element.name)) = $\($0.offset + 1)" }
        let statement =
            "UPDATE \(quoted(M.entity)) SET \(assignments.joined(separator: ", ")) WHERE id = $\(columns.count + 1)"
        try run(statement, binds)
        if let book = model as? Book { try recordOpening(book) }
    }

    func upsert<M: Model>(_ model: inout M) throws {
        counted.forget()  // the pages may change
        // Found by its natural key, never by a row id it may carry; an existing row keeps its uuid.
        let columns = try storedColumns(model).filter { $0.name != "id" }
        var binds = PostgresBindings()
        for column in columns { column.value.bind(into: &binds) }
        let names = columns.map { quoted($0.name) }.joined(separator: ", ")
        let values = columns.indices.map { "$\($0 + 1)" }.joined(separator: ", ")
        let keys = (Self.conflictKeys[M.entity] ?? M.naturalKey).map(quoted).joined(separator: ", ")
        var updated = columns.map(\.name).filter { !M.naturalKey.contains($0) && $0 != "uuid" }
        if updated.isEmpty { updated = [M.naturalKey[0]] }
        let assignments = updated.map { "\(quoted($0)) = EXCLUDED.\(quoted($0))" }.joined(separator: ", ")
        let statement =
            "INSERT INTO \(quoted(M.entity)) (\(names)) VALUES (\(values)) ON CONFLICT (\(keys)) DO UPDATE SET \(assignments) RETURNING *"
        guard let row = try run(statement, binds).rows.first else { return }
        model = try written(row, model)
    }

    /// The row an insert or upsert returned, as a model. A book's row holds no `openedAt` (it
    /// is each user's): the one the model brought is recorded as the user's, else the user's
    /// own is read back.
    private func written<M: Model>(_ row: PostgresRow, _ model: M) throws -> M {
        let saved = try M(from: ColumnDecoder(row: row.makeRandomAccess()))
        guard var book = saved as? Book else { return saved }
        if let opened = (model as? Book)?.openedAt {
            book.openedAt = opened
            try recordOpening(book)
        } else {
            var binds = PostgresBindings()
            binds.append(book.id ?? 0)
            book.openedAt = try run("SELECT \"openedAt\" FROM reading WHERE \"bookId\" = $1", binds).rows.first?
                .decode(Date.self)
        }
        return book as? M ?? saved
    }

    /// The user's opening of a book, in the user's own row (`reading`): the shared book row is
    /// neither rewritten nor locked, so many users reading (and annotating) one book don't wait
    /// for each other.
    /// The book is read and its opening written in one statement (a round trip, not two: a memo
    /// saved in `serve` made 6, now 5); `MARGIN_PLAIN=opening-statement` reads, then writes.
    func noteOpened(bookId: Int64, at date: Date) throws -> Book? {
        guard Self.opensInOneStatement else {
            guard var book = try find(Book.self, id: bookId) else { return nil }
            book.openedAt = date
            try recordOpening(book)
            return book
        }
        var sql = SQLBuilder(table: "reading")
        let id = sql.bind(.integer(bookId))
        let opened = sql.bind(.date(date))
        // It writes, though it begins as a read does (`reads`): what a write forgets, forgotten.
        forgetReads()
        let rows = try run(
            "WITH b AS MATERIALIZED (SELECT * FROM \(source(Book.self)) WHERE id = \(id)), o AS (INSERT INTO reading "
                + "(\"bookId\", \"openedAt\") SELECT id, \(opened) FROM b ON CONFLICT (role, \"bookId\") DO UPDATE SET "
                + "\"openedAt\" = EXCLUDED.\"openedAt\") SELECT * FROM b", sql.binds, kinds: sql.kinds
        ).rows
        guard let row = rows.first else { return nil }
        var book = try Book(from: ColumnDecoder(row: row.makeRandomAccess()))
        book.openedAt = date
        return book
    }

    /// Whether `noteOpened` is one statement (unless `MARGIN_PLAIN` names `opening-statement`).
    static let opensInOneStatement = FastPaths.isOn("opening-statement")

    /// Records a book's `openedAt` as the user's (table `reading`; its row-level security
    /// keeps each user to their own rows), not in the shared row.
    func recordOpening(_ book: Book) throws {
        guard let id = book.id, let opened = book.openedAt else { return }
        var binds = PostgresBindings()
        binds.append(id)
        binds.append(opened)
        try run(
            "INSERT INTO reading (\"bookId\", \"openedAt\") VALUES ($1, $2) ON CONFLICT (role, \"bookId\") DO UPDATE SET \"openedAt\" = EXCLUDED.\"openedAt\"",
            binds)
    }

    func highlightsToPlace(bookId: Int64) throws -> [Highlight] {
        var binds = PostgresBindings()
        binds.append(bookId)
        return try run("SELECT * FROM margin.highlights_to_place($1)", binds).rows.map { row in
            try Highlight(from: ColumnDecoder(row: row.makeRandomAccess()))
        }
    }

    /// The database's own functions move them (`v10-move-annotations`): everyone's, when this
    /// user may change the book's content, and only where they are.
    func moveAnnotations(bookId: Int64, highlights: [Highlight], moved: [Int: Int]) throws {
        struct Place: Encodable {
            var id: Int64
            var page: Int
            var text, prefix, suffix, rects, norm: String
            var orphaned: Bool
        }
        let places = try highlights.map { highlight in
            let columns = Dictionary(try storedColumns(highlight).map { ($0.name, $0.value) }) { first, _ in first }
            guard case .text(let rects)? = columns["rects"], case .text(let norm)? = columns["norm"] else {
                throw StoreError.failed(path: session.path, message: "a highlight without its rects")
            }
            return Place(
                id: highlight.id ?? 0, page: highlight.page, text: highlight.text, prefix: highlight.prefix,
                suffix: highlight.suffix, rects: rects, norm: norm, orphaned: highlight.orphaned)
        }
        let encoder = JSONEncoder()
        var binds = PostgresBindings()
        binds.append(bookId)
        binds.append(String(decoding: try encoder.encode(places), as: UTF8.self))
        try run("SELECT margin.place_highlights($1, $2::jsonb)", binds)
        var pages = PostgresBindings()
        pages.append(bookId)
        pages.append(
            String(
                decoding: try encoder.encode(
                    Dictionary(uniqueKeysWithValues: moved.map { (String($0.key), $0.value) })),
                as: UTF8.self))
        try run("SELECT margin.move_pages($1, $2::jsonb)", pages)
    }

    func delete<M: Model>(_ query: Query<M>) throws -> Int {
        counted.forget()  // the pages may change
        var sql = SQLBuilder(table: M.entity)
        let statement = sql.delete(query)
        return try run(statement, sql.binds).affected ?? 0
    }

    /// The model's columns plus what the store keeps beside them: the folded text the trigram
    /// indexes search (`norm`), worked out here, in Swift.
    ///
    /// Who made a row is the database's to say (`owner`, `addedBy` default to the role) when the
    /// model doesn't name anyone; a book's `openedAt` is not stored in the shared row.
    private func storedColumns<M: Model>(_ model: M) throws -> [(name: String, value: ColumnValue)] {
        var columns = try ColumnEncoder.columns(of: model).filter { column in
            switch (column.name, column.value) {
            case ("owner", .null), ("addedBy", .null): return false
            case ("openedAt", _): return M.self != Book.self
            default: return true
            }
        }
        if let searchable = model as? any SearchableModel {
            columns.append(("norm", .text(folded(searchable.searchText))))
        } else if let page = model as? PageText {
            let norm = folded(page.text)
            columns.append(("norm", .text(norm)))
            // Its length in index words, as SQLite's index counts it, for ranking (bm25).
            let words =
                page.indexedWords.map { $0.split(separator: " ").count } ?? indexWords(norm.unicodeScalars).count
            columns.append(("words", .integer(Int64(words))))
        }
        return columns
    }

    // MARK: TextIndex

    func candidatePages(
        containing terms: [String], words: WordTier, books: [Int64]?, visit: (PageText) throws -> Bool
    ) throws {
        try candidatePages(containing: terms, words: words, books: books, wanted: nil, visit: visit)
    }

    func candidatePages(
        containing terms: [String], words: WordTier, books: [Int64]?, wanted: Int,
        visit: (PageText) throws -> Bool
    ) throws {
        try candidatePages(containing: terms, words: words, books: books, wanted: Optional(wanted), visit: visit)
    }

    private func candidatePages(
        containing terms: [String], words: WordTier, books: [Int64]?, wanted: Int?,
        visit: (PageText) throws -> Bool
    ) throws {
        if let found = try wordTerms(terms) {
            return try candidatePages(found, terms: terms, books: books, words: words, wanted: wanted, visit: visit)
        }
        var sql = SQLBuilder(table: "page")
        let phrases = try phraseWords(terms)
        let filter = sql.contains(terms, books: books, words: words, phrases: phrases)
        let key = countKey(terms, words)
        let ranked = terms.filter(Self.isRanked)
        if ranked.contains(where: { TermWords($0.unicodeScalars).words.count > 1 }) {
            // Pages found by the pairs' index alone are found by one plan whatever the words (one
            // of a word in the text, by the trigram index, would scan every page for a common one):
            // prepared then, planned once.
            let byPairs = books == nil && words == .any && terms.allSatisfy { phrases[$0]?.pairs.isEmpty == false }
            // A phrase is on few pages: ranked at once, counted by the same pass (the trigram
            // index's pages read once, not once to count and again to rank).
            let (columns, score) = try relevance(ranked, &sql)
            let answer = try run(
                rankedWithFirstPages(
                    ["id", "count(*) OVER () AS n"],
                    "FROM (SELECT id, \"bookId\", number, words, \(columns) FROM page\(filter)) AS found",
                    order: "\(score) DESC, \"bookId\", number", limit: SearchRanking.rankedPages + 1),
                sql.binds, kinds: byPairs ? sql.kinds : nil
            ).rows
            let rows = try answer.map { try $0.decode((Int64, Int64).self) }
            let matches = Int(rows.first?.1 ?? 0)
            counted.record(
                terms: key, books: books, count: min(matches, SearchRanking.rankedPages + 1),
                cap: SearchRanking.rankedPages + 1)
            if matches <= SearchRanking.rankedPages {
                try visitPages(rows.map(\.0), first: try firstPages(answer, id: 0), visit: visit)
                return
            }
            return try pagesInOrder(terms, books: books, words: words, visit: visit)
        }
        if !ranked.isEmpty {
            let matches = try countPagesContaining(
                terms, books: books, words: words, cap: SearchRanking.rankedPages + 1)
            counted.record(terms: key, books: books, count: Int(matches), cap: SearchRanking.rankedPages + 1)
            if matches > 1, matches <= SearchRanking.rankedPages {
                // The order first (ids only), then the pages' text a batch at a time, as visited.
                let (columns, score) = try relevance(ranked, &sql)
                let ids = try run(
                    "SELECT id FROM (SELECT id, \"bookId\", number, words, \(columns) FROM page\(filter)) AS found "
                        + "ORDER BY \(score) DESC, \"bookId\", number", sql.binds
                ).rows.map { try $0.decode(Int64.self) }
                try visitPages(ids, visit: visit)
                return
            }
        }
        try pagesInOrder(terms, books: books, words: words, visit: visit)
    }

    /// What a count of candidate pages is recorded under: the terms, and the words the pages
    /// must hold when there are any.
    func countKey(_ terms: [String], _ words: WordTier) -> [String] {
        words == .any ? terms : terms + ["\u{1}" + words.key]
    }

    /// The pages with these ids, in this order, read a batch at a time until `visit` says stop:
    /// the first batch of `firstPages`, what a search's first 50 hits usually need (each batch
    /// is a round trip to the server, which costs more than reading a few pages too many).
    /// `first`: the first batch's pages, when the statement ranking them read them too
    /// (`rankedWithFirstPages`).
    @discardableResult
    func visitPages(
        _ ids: [Int64], first: [PageText]? = nil, count: Int = firstPages, visit: (PageText) throws -> Bool
    ) throws -> Bool {
        var first = first
        return try SearchRanking.visitPages(
            ids, first: count,
            load: { batch in
                if let pages = first {
                    first = nil
                    return pages
                }
                var binds = PostgresBindings()
                binds.append(batch)
                return try run(
                    "SELECT id, \"bookId\", number, text FROM page WHERE id = ANY($1)", binds, kinds: "[Int64]"
                ).rows.map {
                    try PageText(from: ColumnDecoder(row: $0.makeRandomAccess()))
                }
            }, visit: visit)
    }

    /// The first batch of pages a ranked search reads.
    static let firstPages = 64

    /// Whether a statement ranking pages reads the first batch's text too (unless `MARGIN_PLAIN`
    /// names `first-pages`: a statement of its own, after).
    static let readsFirstPages = FastPaths.isOn("first-pages")

    /// A statement ranking pages (`SELECT columns from ORDER BY order`, each column a name or
    /// `… AS name`, `id` the page's), with the rows of its first `firstPages` pages after those
    /// columns (`"bookId"`, `number`, `text`; null for the others), in the same order. The
    /// search reads them where it would have sent a statement for them next: a round trip fewer
    /// for each ranked tier ("probability distribution": two of seven).
    func rankedWithFirstPages(
        _ columns: [String], _ from: String, order: String, limit: Int? = nil, first: Int = firstPages
    ) -> String {
        let limited = limit.map { " LIMIT \($0)" } ?? ""
        guard Self.readsFirstPages else {
            return "SELECT \(columns.joined(separator: ", ")) \(from) ORDER BY \(order)\(limited)"
        }
        let names = columns.map { column in
            let name = column.components(separatedBy: " AS ").last ?? column
            return "o." + (name.split(separator: ".").last.map(String.init) ?? name)
        }
        return "SELECT \(names.joined(separator: ", ")), t.\"bookId\", t.number, t.text FROM "
            + "(SELECT \(columns.joined(separator: ", ")), row_number() OVER (ORDER BY \(order)) AS place \(from) "
            + "ORDER BY place\(limited)) AS o LEFT JOIN LATERAL (SELECT \"bookId\", number, text FROM page "
            + "WHERE id = o.id AND o.place <= \(first) OFFSET 0) AS t ON true ORDER BY o.place"
    }

    /// The first batch's pages in the rows of `rankedWithFirstPages` (`id`: the column of the
    /// page's id); nil when the statement didn't read them.
    func firstPages(_ rows: [PostgresRow], id: Int, count: Int = firstPages) throws -> [PageText]? {
        guard Self.readsFirstPages else { return nil }
        return try rows.prefix(count).compactMap { row in
            let columns = row.makeRandomAccess()
            let last = columns.count - 1
            guard let id = try columns[id].decode(Int64?.self), let book = try columns[last - 2].decode(Int64?.self),
                let number = try columns[last - 1].decode(Int64?.self),
                let text = try columns[last].decode(String?.self)
            else { return nil }
            var page = PageText(bookId: book, number: Int(number), text: text)
            page.id = id
            return page
        }
    }

    /// The pages holding the terms (every page for none), in library order, a batch at a time
    /// (a search that stops at its limit reads no further).
    func pagesInOrder(
        _ terms: [String], books: [Int64]?, words: WordTier = .any, visit: (PageText) throws -> Bool
    ) throws {
        let phrases = try phraseWords(terms)
        /// The batch of `size` pages after `after`.
        func batch(after: (book: Int64, page: Int)?, size: Int) -> (sql: String, binds: PostgresBindings) {
            var sql = SQLBuilder(table: "page")
            var filter = sql.contains(terms, books: books, words: words, phrases: phrases)
            if let after {
                let position =
                    "(\"bookId\", number) > (\(sql.bind(.integer(after.book))), \(sql.bind(.integer(Int64(after.page)))))"
                filter += (filter.isEmpty ? " WHERE " : " AND ") + position
            }
            return (
                "SELECT id, \"bookId\", number, text FROM page\(filter) ORDER BY \"bookId\", number LIMIT \(size)",
                sql.binds
            )
        }
        var size = 64
        var next = batch(after: nil, size: size)
        var batches = 0
        while true {
            let rows = try run(next.sql, next.binds).rows
            batches += 1
            let full = rows.count == size
            if full, let last = rows.last?.makeRandomAccess() {
                // The last page's place alone: its text is decoded once, when it is visited.
                let place = (book: try last[1].decode(Int64.self), page: Int(try last[2].decode(Int64.self)))
                size = min(size * 2, 512)
                next = batch(after: place, size: size)
                // Past the first two batches (more than a page of hits takes), the next is asked
                // for before this one is visited: the server reads it meanwhile ("the" with every
                // hit, 9,905 pages in 22 batches).
                if batches >= 2, Self.readsAheadInOrder { try sendAhead { _ in _ = try run(next.sql, next.binds) } }
            }
            for row in rows {
                guard try visit(try PageText(from: ColumnDecoder(row: row.makeRandomAccess()))) else { return }
            }
            guard full else { return }
        }
    }

    /// Whether a long scan in library order asks for its next batch before visiting this one
    /// (unless `MARGIN_PLAIN` names `read-ahead`).
    static let readsAheadInOrder = FastPaths.isOn("read-ahead")

    /// Whether SQLite's index ranks by the term: not a piece of a word shorter than a trigram
    /// (a query of only such terms lists pages in library order there, and here).
    static func isRanked(_ term: String) -> Bool {
        let words = TermWords(term.unicodeScalars)
        guard let first = words.words.first else { return false }
        return !(words.openStart && words.words.count == 1 && first.unicodeScalars.count < 3)
    }

    /// Okapi BM25 of a page for the terms, as SQLite's FTS5 ranks (`bm25`): term frequencies
    /// counted in the folded text, each term weighted by how rare it is in the library; of
    /// several, only the rare ones when some are common (`rankingTerms`).
    private func relevance(_ terms: [String], _ sql: inout SQLBuilder) throws -> (columns: String, score: String) {
        let (pages, average) = try libraryStatistics()
        var columns = [String]()
        var parts = [String]()
        let ranking = try rankingTerms(terms.indices.filter { !terms[$0].isEmpty }) {
            try pagesHoldingText(terms[$0])
        }
        for index in ranking {
            let term = terms[index]
            var weight = 1.0
            if ranking.count > 1 { weight = bm25Weight(pages: pages, holding: try pagesHoldingText(term)) }
            // Each frequency worked out once per page (the text is read once for it).
            columns.append(textFrequency(term, column: "norm", &sql) + " AS f\(index)")
            parts.append(bm25(weight: weight, frequency: "f\(index)", length: "words", average: average, &sql))
        }
        return (columns.joined(separator: ", "), parts.isEmpty ? "0" : "(" + parts.joined(separator: " + ") + ")")
    }

    /// How many pages of the library hold a term in their text (counted within the minute).
    func pagesHoldingText(_ term: String) throws -> Double {
        try statistics.pages(holding: term) {
            var holding = SQLBuilder(table: "page")
            let filter = holding.contains([term], books: nil, phrases: try phraseWords([term]))
            return try run("SELECT count(*)::float8 FROM page\(filter)", holding.binds).rows.first?.decode(Double.self)
                ?? 0
        }
    }

    /// Of the terms a search ranks by (their indices), those SQLite's index ranks by
    /// (`SQLiteStore.candidatePages`): of several, the ones on at most `rankedPages` pages
    /// (`pages`: how many hold each) when others are on more (those only narrow the pages
    /// down); else all.
    func rankingTerms(_ ranked: [Int], pages: (Int) throws -> Double) throws -> [Int] {
        guard ranked.count > 1 else { return ranked }
        let rare = try ranked.filter { try pages($0) <= Double(SearchRanking.rankedPages) }
        return rare.isEmpty ? ranked : rare
    }

    /// The library's page count and average page length in index words (see `PageStatistics`).
    func libraryStatistics() throws -> (pages: Double, average: Double) {
        try statistics.current {
            let library = try run("SELECT count(*)::float8, coalesce(avg(words), 0)::float8 FROM page").rows.first?
                .makeRandomAccess()
            return (try library?[0].decode(Double.self) ?? 0, max(1, try library?[1].decode(Double.self) ?? 1))
        }
    }

    func countCandidatePages(containing terms: [String], books: [Int64]?, cap: Int) throws -> Int? {
        if let known = counted.count(terms: terms, books: books, cap: cap) { return known }
        if let found = try wordTerms(terms) { return try countPages(found, terms: terms, books: books, cap: cap) }
        return try countPagesContaining(terms, books: books, cap: cap)
    }

    func countCandidatePages(containing terms: [String], words: WordTier, books: [Int64]?, cap: Int) throws -> Int? {
        guard words != .any else { return try countCandidatePages(containing: terms, books: books, cap: cap) }
        let key = countKey(terms, words)
        if let known = counted.count(terms: key, books: books, cap: cap) { return known }
        if let found = try wordTerms(terms) {
            return try countPages(found, terms: terms, books: books, words: words, cap: cap)
        }
        return try countPagesContaining(terms, books: books, words: words, cap: cap)
    }

    /// How many pages `SQLBuilder.contains` selects, counting up to `cap`: from the words alone
    /// when the tier is one group implying every term (`WordTier.groupImplying`) and no books
    /// are named (the pages holding "the" as a word: 2.8 ms through `page`, 0.2 from the words).
    func countPagesContaining(_ terms: [String], books: [Int64]?, words: WordTier = .any, cap: Int) throws -> Int {
        var sql = SQLBuilder(table: "page")
        let pages: String
        if books == nil, words.notHolding.isEmpty, words.holding.count == 1, let group = words.holding.first,
            terms.allSatisfy({ words.groupImplying($0) == 0 })
        {
            pages =
                group.count == 1
                ? "SELECT 1 FROM page_word WHERE word = \(sql.bind(.text(group[0])))"
                : "SELECT DISTINCT page FROM page_word WHERE word = ANY(\(sql.bind(array: group)))"
        } else {
            pages =
                "SELECT 1 FROM page\(sql.contains(terms, books: books, words: words, phrases: try phraseWords(terms)))"
        }
        return Int(
            try run("SELECT count(*) FROM (\(pages) LIMIT \(max(0, cap))) AS found", sql.binds).rows.first?
                .decode(Int64.self) ?? 0)
    }

    func scanPages(books: [Int64]?, visit: (PageText) throws -> Bool) throws {
        try pagesInOrder([], books: books, visit: visit)
    }

    func vocabularies(startingWith prefixes: [String], limit: Int) throws -> [[String]?] {
        guard !prefixes.isEmpty else { return [] }
        // Known from earlier transactions: not sent ahead, read when their version is this one's.
        if sendingKnown(memory.knows(prefixes: prefixes, limit: limit)) {
            return Array(repeating: [], count: prefixes.count)
        }
        if let known = try remembered({ memory.words(startingWith: prefixes, limit: limit, at: $0) }) { return known }
        var binds = PostgresBindings()
        binds.append(Int64(limit + 1))
        for prefix in prefixes { binds.append(likeEscaped(prefix) + "%") }
        // One look-up of each prefix's own (as the vocabulary's index finds it), all in one
        // statement, each row marked with its prefix.
        let statement = prefixes.indices.map {
            "(SELECT \($0)::int8, word FROM word WHERE word LIKE $\($0 + 2) ORDER BY word COLLATE \"C\" LIMIT $1)"
        }.joined(separator: " UNION ALL ")
        var words = [[String]](repeating: [], count: prefixes.count)
        for row in try run(statement, binds, kinds: "i" + String(repeating: "t", count: prefixes.count)).rows {
            let (index, word) = try row.decode((Int64, String).self)
            words[Int(index)].append(word)
        }
        let found = words.map { $0.count > limit ? nil : $0 }
        try remember { memory.keep(startingWith: Array(zip(prefixes, found)), limit: limit, at: $0) }
        return found
    }

    func wordsSharingTrigrams(with term: String, limit: Int) throws -> [String] {
        let length = term.unicodeScalars.count
        guard length >= 3 else { return [] }
        // Its three statements sent together (one wait, not three), then read.
        if !sent.sending { try sendAhead { _ = try $0.textIndex.wordsSharingTrigrams(with: term, limit: limit) } }
        var binds = PostgresBindings()
        binds.append(term)
        binds.append(Int64(length - 2))
        binds.append(Int64(length + 2))
        binds.append(Int64(limit))
        // pg_trgm's similarity (shared trigrams over all of both words'), through the vocabulary's
        // trigram index; from 0.2 (not its 0.3: "driver" is 0.27 from "riverr"), for this
        // transaction only.
        try run("SET LOCAL pg_trgm.similarity_threshold = 0.2")
        let sharing = try run(
            "SELECT word FROM word WHERE word % $1 AND length(word) BETWEEN $2 AND $3 "
                + "ORDER BY similarity(word, $1) DESC, word LIMIT $4", binds
        ).rows.map { try $0.decode(String.self) }
        // And the words with its first letter and its next or its last two (as on SQLite).
        let (first, two, end) = wordEnds(Array(term.unicodeScalars))
        var pattern = PostgresBindings()
        pattern.append(likeEscaped(two) + "%")
        pattern.append(likeEscaped(first) + "%" + likeEscaped(end))
        pattern.append(Int64(length - 2))
        pattern.append(Int64(length + 2))
        pattern.append(Int64(limit))
        let beginning = try run(
            "SELECT word FROM word WHERE (word LIKE $1 OR word LIKE $2) AND length(word) BETWEEN $3 AND $4 "
                + "ORDER BY word COLLATE \"C\" LIMIT $5", pattern
        ).rows.map { try $0.decode(String.self) }
        var seen = Set<String>()
        return (sharing + beginning).filter { seen.insert($0).inserted }
    }

    func pagesHoldingWord(_ word: String, cap: Int) throws -> Int {
        var binds = PostgresBindings()
        binds.append(word)
        return Int(
            try run(
                "SELECT count(*) FROM (SELECT 1 FROM page_word WHERE word = $1 LIMIT \(max(0, cap))) AS found", binds
            ).rows.first?.decode(Int64.self) ?? 0)
    }

    func candidateAnnotations(containing terms: [String], books: [Int64]?) throws -> [(kind: String, id: Int64)] {
        var found = [(kind: String, id: Int64)]()
        for table in ["highlight", "memo"] {
            var sql = SQLBuilder(table: table)
            let filter = sql.contains(terms, books: books)
            let ids = try run("SELECT id FROM \(table)\(filter) ORDER BY id", sql.binds).rows.map {
                try $0.decode(Int64.self)
            }
            found += ids.map { (table, $0) }
        }
        return found
    }
}

/// An identifier in double quotes (names come from model code, never from users).
func quoted(_ name: String) -> String { quotedIdentifier(name) }

/// PostgreSQL's spelling of a query (`QueryRenderer`) for one table: numbered placeholders,
/// booleans and case-insensitive tag names where the table has them.
struct PostgresDialect: SQLDialect {
    let table: String
    var binds = PostgresBindings()
    /// The kind of each argument bound, in order (a letter each): with the text, what fixes the
    /// types a prepared statement is parsed with.
    var kinds = ""

    mutating func bind(_ value: StoreValue, column: String?) -> String {
        if let column, PostgresMigrations.booleanColumns[table]?.contains(column) == true,
            case .integer(let int) = value
        {
            return bind(.boolean(int != 0))
        }
        let bound = bind(ColumnValue(value))
        return column == "name" && table == "tag" ? bound + "::citext" : bound
    }

    mutating func bind(_ value: ColumnValue) -> String {
        value.bind(into: &binds)
        kinds.append(value.kind)
        return "$\(binds.count)"
    }

    /// `column = ANY($n)`, one array for a list of integers or of texts: one statement whatever
    /// the list's length (a statement prepared once serves every list).
    /// (Not for a boolean column, nor a tag's name: those are bound as their own types.)
    mutating func isIn(_ column: String, name: String, values: [StoreValue]) -> String? {
        guard PostgresMigrations.booleanColumns[table]?.contains(name) != true, table != "tag" || name != "name"
        else { return nil }
        let integers = values.compactMap { value -> Int64? in if case .integer(let int) = value { int } else { nil } }
        if integers.count == values.count { return "\(column) = ANY(\(bind(array: integers)))" }
        let texts = values.compactMap { value -> String? in if case .text(let text) = value { text } else { nil } }
        return texts.count == values.count ? "\(column) = ANY(\(bind(array: texts)))" : nil
    }

    /// A placeholder for an array, bound.
    mutating func bind<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable>(array: [Element]) -> String {
        binds.append(array)
        kinds.append("[\(Element.self)]")
        return "$\(binds.count)"
    }

    let truth = (true: "true", false: "false")

    func orderKey(_ column: String) -> String {
        PostgresMigrations.textColumns[table]?.contains(column) == true
            ? "lower(\(quoted(column)))" : quoted(column)
    }

    /// PostgreSQL returns rows that sort equal in no set order.
    let ordersByIdLast = true
    mutating func hasPrefix(_ column: String, text: String) -> String {
        "starts_with(\(column)::text, \(bind(.text(text), column: nil)))"
    }

    func limit(_ limit: Int?, offset: Int?) -> String {
        (limit.map { " LIMIT \($0)" } ?? "") + (offset.map { " OFFSET \($0)" } ?? "")
    }
}

/// WHERE, ORDER BY and LIMIT clauses with their bound values.
struct SQLBuilder {
    private var renderer: QueryRenderer<PostgresDialect>
    var binds: PostgresBindings { renderer.dialect.binds }
    /// The arguments' kinds (`PostgresDialect.kinds`).
    var kinds: String { renderer.dialect.kinds }

    init(table: String) { renderer = QueryRenderer(PostgresDialect(table: table)) }

    /// A placeholder for `value`, bound.
    mutating func bind(_ value: ColumnValue) -> String { renderer.dialect.bind(value) }

    /// A placeholder for an array, bound.
    mutating func bind<Element: PostgresArrayEncodable & PostgresNonThrowingEncodable>(array: [Element]) -> String {
        renderer.dialect.bind(array: array)
    }

    mutating func clauses<M: Model>(_ query: Query<M>, withOrder: Bool) -> String {
        renderer.clauses(query, withOrder: withOrder)
    }

    mutating func condition(_ predicate: MarginCore.Predicate) -> String { renderer.condition(predicate) }

    mutating func delete<M: Model>(_ query: Query<M>) -> String { renderer.delete(query) }

    /// Whether a column of folded text holds a term, as its trigram index finds it (`LIKE`).
    mutating func holds(_ term: String, column: String) -> String {
        "\(column) LIKE \(bind(.text("%" + likeEscaped(term) + "%")))"
    }

    /// The same, checked on rows found otherwise (by their ids): `strpos` searches the bytes,
    /// where `LIKE` steps through the text a character at a time (the 714 pages holding
    /// "probability" and "distribution" checked for the phrase: 2.4 ms against 7.6).
    mutating func holdsFound(_ term: String, column: String) -> String {
        "strpos(\(column), \(bind(.text(term)))) > 0"
    }

    /// Whether a page's folded text holds a phrase whose pages its words find (`phraseWords`):
    /// a page holding each of its pairs of words side by side (`pairs`: any of the pairs of
    /// words the two groups stand for, hashed as the page's are, `word_pair`), or without pairs
    /// a word of each group, its text checked (`strpos`). The pairs and the pages' ids are made
    /// first (the statement's init plans, as are each edge's words), so the planner looks the
    /// pages up by the pairs' index or their ids rather than, misjudging how many there are,
    /// reading the whole table.
    mutating func holds(_ phrase: String, words: PhraseWords) -> String {
        func listed(_ group: PhraseGroup) -> String {
            guard let pattern = group.pattern else { return "SELECT \(bind(.text(group.word)))::text AS word" }
            return "SELECT word FROM word WHERE word LIKE \(bind(.text(pattern)))"
        }
        guard words.pairs.isEmpty else {
            let pairs = words.pairs.map { pair in
                "pairs && (SELECT array(SELECT word_pair(a.word, b.word) FROM (\(listed(pair.first))) AS a, "
                    + "(\(listed(pair.second))) AS b))"
            }
            return pairs.joined(separator: " AND ") + " AND " + holdsFound(phrase, column: "norm")
        }
        let pages = words.groups.map { group in
            guard group.pattern != nil else {
                return "SELECT page FROM page_word WHERE word = \(bind(.text(group.word)))"
            }
            return "SELECT page FROM page_word WHERE word = ANY((SELECT array(\(listed(group))))::text[])"
        }
        return "id = ANY((SELECT array(\(pages.joined(separator: " INTERSECT "))))::int8[]) AND "
            + holdsFound(phrase, column: "norm")
    }

    /// Pages (or annotations) whose folded text holds every term, of one book or all, of the tier
    /// `words` names; pages holding a phrase of `phrases` found by its words.
    mutating func contains(
        _ terms: [String], books: [Int64]?, words: WordTier = .any, phrases: [String: PhraseWords] = [:]
    ) -> String {
        // A term a group of the tier's words implies (`WordTier.groupImplying`; PostgreSQL's
        // page words are pieces of the folded text too, `page_words`) is on every page of the
        // tier, unread. ("the" as a word: no reading of 2,001 pages' text to find its pages.)
        var parts = terms.filter { words.groupImplying($0) == nil }.map { term in
            phrases[term].map { holds(term, words: $0) } ?? holds(term, column: "norm")
        }
        if let books { parts.append("\"bookId\" = ANY(\(bind(array: books)))") }
        if let tier = tier(words, id: "id") { parts.append(tier) }
        return parts.isEmpty ? "" : " WHERE " + parts.joined(separator: " AND ")
    }

    /// The condition on a page's id (`id`: its column) for a tier of candidates, by the words it
    /// holds (`page_word`, as SQLite's index holds them); nil for every candidate.
    mutating func tier(_ words: WordTier, id: String) -> String? {
        func holding(_ groups: [[String]]) -> String {
            groups.map { "\(id) IN (SELECT page FROM page_word WHERE word = ANY(\(bind(array: $0))))" }
                .joined(separator: " AND ")
        }
        var parts = [String]()
        if !words.holding.isEmpty { parts.append(holding(words.holding)) }
        if !words.notHolding.isEmpty { parts.append("NOT (\(holding(words.notHolding)))") }
        return parts.isEmpty ? nil : parts.joined(separator: " AND ")
    }
}

/// Statements a transaction sent ahead (`PostgresStore.sendAhead`) and their answers to come, by
/// statement and arguments; while `sending`, statements are sent and kept, and answered with no
/// rows. One transaction's, on its thread.
final class SentAhead: @unchecked Sendable {
    struct Statement: Hashable {
        let sql: String
        let binds: PostgresBindings
    }

    private var answers = [Statement: [PendingAnswer]]()
    var sending = false

    var isEmpty: Bool { answers.isEmpty }

    func keep(_ statement: Statement, _ answer: PendingAnswer) { answers[statement, default: []].append(answer) }

    /// The first answer to come to this statement, if it was sent.
    func take(_ statement: Statement) -> PendingAnswer? {
        // Nothing sent: not even hashed (a page's text is among an insert's arguments).
        guard !answers.isEmpty, var waiting = answers[statement], !waiting.isEmpty else { return nil }
        let first = waiting.removeFirst()
        answers[statement] = waiting.isEmpty ? nil : waiting
        return first
    }

    func drop() { answers.removeAll() }
}

/// The titles and page labels a transaction read together (`PostgresStore.titles(of:)`), by
/// book, for `pageLabels(of:)` to answer from, and what it read of the books it searched
/// (`searchedBooks`); the statements sent ahead for them, and the books' facts waiting to be
/// sent with the next titles. Forgotten when the transaction writes.
final class ShownBooks: @unchecked Sendable {
    /// What `searchedBooks` was asked.
    typealias Facts = BooksSearched

    private let lock = NSLock()
    private var titles = [Int64: String]()
    private var labels = [Int64: [String]]()
    /// The books read (each with a title, or none: no such book).
    private var read = Set<Int64>()
    /// The books of each titles' statement sent ahead and not yet answered, and the facts sent
    /// with them.
    private var asked = [(books: [Int64], facts: Facts?)]()
    /// The terms of each look-up of words sent ahead and not yet answered (`lookAhead`), and the
    /// facts sent with them.
    private var wordsAsked = [(terms: [String], facts: Facts?)]()
    private var known = [(facts: Facts, read: SearchedBooks)]()
    private var deferred: Facts?
    /// Whether the facts deferred are being sent on their own (`PostgresStore.sendAhead`).
    var deferring = false

    func sent(_ books: [Int64], facts: Facts?) { lock.withLock { asked.append((books, facts)) } }

    func keep(_ books: [Int64], titles: [Int64: String], labels: [Int64: [String]]) {
        lock.withLock {
            asked.removeAll { $0.books == books }
            read.formUnion(books)
            self.titles.merge(titles) { a, _ in a }
            self.labels.merge(labels) { a, _ in a }
        }
    }

    func keep(_ facts: Facts, _ searched: SearchedBooks) { lock.withLock { known.append((facts, searched)) } }

    /// What was read of the books searched that answers `asked`.
    func facts(_ asked: Facts) -> SearchedBooks? {
        lock.withLock {
            guard let found = known.last(where: { $0.facts.answers(asked) }) else { return nil }
            var read = found.read
            if !asked.languages { read.languages = [] }
            return read
        }
    }

    func deferFacts(_ facts: Facts) { lock.withLock { deferred = facts } }

    func takeDeferred() -> Facts? {
        lock.withLock {
            defer { deferred = nil }
            return deferred
        }
    }

    /// The facts sent ahead with the titles of these books.
    func factsSent(with books: [Int64]) -> Facts? {
        lock.withLock { asked.first { $0.books == books }?.facts }
    }

    func sent(words terms: [String], facts: Facts?) { lock.withLock { wordsAsked.append((terms, facts)) } }

    /// Whether a look-up of these terms' words was sent ahead and not yet answered.
    func sentWords(_ terms: [String]) -> Bool { lock.withLock { wordsAsked.contains { $0.terms == terms } } }

    /// The facts sent ahead with the look-up of these terms' words, taken (it is being answered).
    func takeFactsSent(withWords terms: [String]) -> Facts? {
        lock.withLock {
            guard let index = wordsAsked.firstIndex(where: { $0.terms == terms }) else { return nil }
            return wordsAsked.remove(at: index).facts
        }
    }

    /// The terms of the look-up of words sent ahead with facts answering `facts`.
    func wordsSent(withFacts facts: Facts) -> [String]? {
        lock.withLock { wordsAsked.first { $0.facts?.answers(facts) == true }?.terms }
    }

    /// The books of the titles' statement sent ahead with facts answering `facts`.
    func titlesSent(withFacts facts: Facts) -> [Int64]? {
        lock.withLock { asked.first { $0.facts?.answers(facts) == true }?.books }
    }

    /// Their titles, if all these books were read.
    func titles(of books: [Int64]) -> [Int64: String]? {
        lock.withLock {
            guard books.allSatisfy(read.contains) else { return nil }
            return titles.filter { books.contains($0.key) }
        }
    }

    /// The labels of those that label their pages, if all these books were read.
    func labels(of books: [Int64]) -> [Int64: [String]]? {
        lock.withLock {
            guard books.allSatisfy(read.contains) else { return nil }
            return labels.filter { books.contains($0.key) }
        }
    }

    /// The books of a titles' statement sent ahead that holds all these.
    func sentCovering(_ books: [Int64]) -> [Int64]? {
        lock.withLock { asked.first { ask in books.allSatisfy(ask.books.contains) }?.books }
    }

    /// Whether these books were read or sent for.
    func covers(_ books: [Int64]) -> Bool {
        lock.withLock {
            books.allSatisfy(read.contains) || asked.contains { ask in books.allSatisfy(ask.books.contains) }
        }
    }

    func forget() {
        lock.withLock {
            titles.removeAll()
            labels.removeAll()
            read.removeAll()
            asked.removeAll()
            wordsAsked.removeAll()
            known.removeAll()
            deferred = nil
        }
    }
}

/// The counts of candidate pages a transaction made, each with a cap: `count` pages when it is
/// under the cap, else at least the cap. Several are kept: a search's tiers count theirs, and
/// the count of the pages past the hits shown asks for them again.
final class CountedCandidates: @unchecked Sendable {
    private let lock = NSLock()
    private var known = [(terms: [String], books: [Int64]?, count: Int, cap: Int)]()
    /// The counts kept (a search makes one for each tier).
    static let kept = 8
    /// Each word term's words as the vocabulary gave them (`wordTerms`), by the terms asked.
    private var words = [[String]: [WordTerm]?]()

    func record(terms: [String], books: [Int64]?, count: Int, cap: Int) {
        lock.withLock {
            known.removeAll { $0.terms == terms && $0.books == books }
            if known.count == Self.kept { known.removeFirst() }
            known.append((terms, books, count, cap))
        }
    }

    /// The count with `cap` (as `SELECT count(*) … LIMIT cap` gives it), when one made tells.
    func count(terms: [String], books: [Int64]?, cap: Int) -> Int? {
        lock.withLock {
            guard let known = known.last(where: { $0.terms == terms && $0.books == books }) else { return nil }
            if known.count < known.cap { return min(known.count, cap) }  // exact
            return cap <= known.cap ? cap : nil  // at least known.cap pages
        }
    }

    /// The terms' words, looked up once a transaction (a search asks for the same terms in
    /// each tier and again to count).
    /// Whether the terms' words were looked up (`wordTerms`).
    func knowsWords(_ terms: [String]) -> Bool { lock.withLock { words[terms] != nil } }

    func wordTerms(_ terms: [String], _ lookUp: () throws -> [WordTerm]?) rethrows -> [WordTerm]? {
        if let known = lock.withLock({ words[terms] }) { return known }
        let found = try lookUp()
        lock.withLock { words[terms] = .some(found) }
        return found
    }

    /// Forgets everything: the transaction wrote to the pages.
    func forget() {
        lock.withLock {
            known.removeAll()
            words.removeAll()
        }
    }
}

/// The library's page count and average page length (in index words) that ranking weighs
/// with, and how many pages hold each of the terms (and words) searched lately, each worked
/// out at most once a minute: they move slowly, and reading them is a pass over every page (or
/// every page holding a term).
final class PageStatistics: @unchecked Sendable {
    private let lock = NSLock()
    private var known: (pages: Double, average: Double, at: Date)?
    private var holding = [String: (value: Double, at: Date)]()
    private var wordsHolding = [String: (value: Double, at: Date)]()
    private var narrowing = [String: (value: PhraseNarrowing, at: Date)]()
    /// Terms (and phrases, and words) whose page counts (and narrowing groups) are kept.
    static let keptWeights = 1_000

    /// How many pages hold a term, as counted within the minute.
    func pages(holding term: String, _ compute: () throws -> Double) throws -> Double {
        try withinTheMinute(\.holding, term, compute)
    }

    /// How many pages hold each of the vocabulary's `words` as a word, as counted within the
    /// minute: those not counted then are counted together (`compute`, given them in order).
    func pages(holdingWords words: [String], _ compute: ([String]) throws -> [Double]) throws -> [String: Double] {
        let now = Date()
        var found = [String: Double]()
        lock.withLock {
            for word in words {
                if let known = wordsHolding[word], now.timeIntervalSince(known.at) < 60 { found[word] = known.value }
            }
        }
        let missing = Array(Set(words).subtracting(found.keys)).sorted()
        guard !missing.isEmpty else { return found }
        let counted = try compute(missing)
        lock.withLock {
            if wordsHolding.count + missing.count > Self.keptWeights { wordsHolding.removeAll(keepingCapacity: true) }
            for (word, count) in zip(missing, counted) {
                found[word] = count
                wordsHolding[word] = (count, now)
            }
        }
        return found
    }

    /// Which of a phrase's groups of words narrow its pages enough, and how many words each
    /// stands for (`PostgresStore.phraseWords`), as worked out within the minute: what changes
    /// with the library is how fast the phrase is found, never what is found (each group's
    /// words, and each pair's, are looked up by the statement using them).
    func narrowing(of phrase: String, _ compute: () throws -> PhraseNarrowing) throws -> PhraseNarrowing {
        try withinTheMinute(\.narrowing, phrase, compute)
    }

    /// The value kept for a key in one of the tables if worked out within the minute, else
    /// worked out now and kept (a full table is emptied first).
    private func withinTheMinute<Value>(
        _ table: ReferenceWritableKeyPath<PageStatistics, [String: (value: Value, at: Date)]>, _ key: String,
        _ compute: () throws -> Value
    ) throws -> Value {
        if let known = lock.withLock({ self[keyPath: table][key] }), Date().timeIntervalSince(known.at) < 60 {
            return known.value
        }
        let value = try compute()
        lock.withLock {
            if self[keyPath: table].count >= Self.keptWeights { self[keyPath: table].removeAll(keepingCapacity: true) }
            self[keyPath: table][key] = (value, Date())
        }
        return value
    }

    func current(_ compute: () throws -> (Double, Double)) throws -> (pages: Double, average: Double) {
        if let known = lock.withLock({ known }), Date().timeIntervalSince(known.at) < 60 {
            return (known.pages, known.average)
        }
        let (pages, average) = try compute()
        lock.withLock { known = (pages, average, Date()) }
        return (pages, average)
    }
}

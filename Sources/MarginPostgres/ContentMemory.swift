import Foundation
import MarginCore
import PostgresNIO

/// The library's content as a snapshot sees it (`content_version`, schema v18): its epoch (a
/// random number each library is made with, telling it from another at the same URL) and its
/// version (raised by every transaction writing the vocabulary, the books or their guides).
struct ContentVersion: Equatable, Sendable {
    var epoch: Int64
    var version: Int64
}

/// What the reads of one library found besides its pages, kept across transactions while the
/// content stays as it was (`ContentVersion`): the words of the vocabulary holding each term and
/// those starting with each prefix (other forms of a word), what a search reads of the books it
/// searched (`searchedBooks`), the titles and page labels of the books it hit. A search sends the
/// version ahead of everything else (a round trip not waited for), and reads each of those from
/// here when its snapshot's version is the one kept: the look-up of its words with its books'
/// facts, its words' other forms, and the titles with the labels are not sent ("eigenvalue", no
/// hit: BEGIN, the version and COMMIT alone). A version seen newer (or of another epoch) empties
/// it; an older one (a transaction begun before another's write) is neither read from nor kept.
/// Bounded: emptied when it would hold more than `maxWords` words or `maxBooks` books.
/// `MARGIN_PLAIN=content-memory` keeps nothing (every search asks).
final class ContentMemory: @unchecked Sendable {
    /// Whether a library keeps them (unless `MARGIN_PLAIN` names `content-memory`).
    static let isOn = FastPaths.isOn("content-memory")
    /// At most this many words (of all the terms held), and this many books' titles.
    static let maxWords = 100_000
    static let maxBooks = 100_000
    /// At most this many answers of `searchedBooks` (each for a choice of books).
    static let maxFacts = 64

    private let lock = NSLock()
    /// Whether this library keeps them (`isOn`, unless a test turns it off).
    var keeps: Bool {
        get { lock.withLock { kept } }
        set {
            lock.withLock {
                kept = newValue
                version = nil
                empty()
            }
        }
    }
    private var kept = ContentMemory.isOn
    private var version: ContentVersion?
    private var words = [String: WordTerm]()
    /// The words starting with a prefix, by limit and prefix (`prefixKey`).
    private var starting = [String: [String]?]()
    private var heldWords = 0
    private var facts = [(asked: BooksSearched, read: SearchedBooks)]()
    private var titles = [Int64: String]()
    private var labels = [Int64: [String]]()
    /// The books whose titles were read (a book without a title here: none such).
    private var read = Set<Int64>()

    /// Whether answers for `seen` are kept now: a newer version (or another epoch) empties what
    /// is kept first; an older one is not kept.
    private func at(_ seen: ContentVersion) -> Bool {
        if version == seen { return true }
        if let version, version.epoch == seen.epoch, version.version > seen.version { return false }
        empty()
        version = seen
        return true
    }

    private func empty() {
        words.removeAll()
        starting.removeAll()
        heldWords = 0
        facts.removeAll()
        titles.removeAll()
        labels.removeAll()
        read.removeAll()
    }

    // MARK: The words holding each term

    /// Whether every one of `terms` is known (at the version kept: whether it is the
    /// transaction's is asked when it is read, `words(of:at:)`).
    func knows(terms: [String]) -> Bool { lock.withLock { terms.allSatisfy { words[$0] != nil } } }

    /// The words holding each of `terms`, if all are known at `seen`.
    func words(of terms: [String], at seen: ContentVersion) -> [WordTerm]? {
        lock.withLock {
            guard version == seen else { return nil }
            let known = terms.compactMap { words[$0] }
            return known.count == terms.count ? known : nil
        }
    }

    func keep(words found: [(term: String, words: WordTerm)], at seen: ContentVersion) {
        lock.withLock {
            guard room(forWords: found.reduce(0) { $0 + $1.words.words.count + 1 }, at: seen) else { return }
            for (term, words) in found where self.words.updateValue(words, forKey: term) == nil {
                heldWords += words.words.count + 1
            }
        }
    }

    /// Whether `count` more words may be kept for `seen` (emptied first when they would pass
    /// `maxWords`). Under the lock.
    private func room(forWords count: Int, at seen: ContentVersion) -> Bool {
        guard at(seen), count <= Self.maxWords else { return false }
        if heldWords + count > Self.maxWords { empty() }
        return true
    }

    // MARK: The words starting with each prefix (other forms of a word)

    private func prefixKey(_ prefix: String, _ limit: Int) -> String { "\(limit) \(prefix)" }

    func knows(prefixes: [String], limit: Int) -> Bool {
        lock.withLock { prefixes.allSatisfy { starting[prefixKey($0, limit)] != nil } }
    }

    /// The vocabulary's words starting with each of `prefixes` (nil: more than `limit`), if all
    /// are known at `seen`.
    func words(startingWith prefixes: [String], limit: Int, at seen: ContentVersion) -> [[String]?]? {
        lock.withLock {
            guard version == seen else { return nil }
            let known = prefixes.compactMap { starting[prefixKey($0, limit)] }
            return known.count == prefixes.count ? known : nil
        }
    }

    func keep(startingWith found: [(prefix: String, words: [String]?)], limit: Int, at seen: ContentVersion) {
        lock.withLock {
            guard room(forWords: found.reduce(0) { $0 + ($1.words?.count ?? 0) + 1 }, at: seen) else { return }
            for (prefix, words) in found where starting.updateValue(words, forKey: prefixKey(prefix, limit)) == nil {
                heldWords += (words?.count ?? 0) + 1
            }
        }
    }

    // MARK: What a search reads of its books

    func knows(facts asked: BooksSearched) -> Bool {
        lock.withLock { facts.contains { $0.asked.answers(asked) } }
    }

    func facts(_ asked: BooksSearched, at seen: ContentVersion) -> SearchedBooks? {
        lock.withLock {
            guard version == seen, var read = facts.last(where: { $0.asked.answers(asked) })?.read else { return nil }
            if !asked.languages { read.languages = [] }
            return read
        }
    }

    func keep(facts asked: BooksSearched, _ found: SearchedBooks, at seen: ContentVersion) {
        lock.withLock {
            guard at(seen) else { return }
            if facts.count >= Self.maxFacts { facts.removeFirst() }
            facts.append((asked, found))
        }
    }

    // MARK: Titles and page labels

    func knows(books: [Int64]) -> Bool { lock.withLock { books.allSatisfy(read.contains) } }

    /// The titles and labels of `books`, if all were read at `seen`.
    func titles(of books: [Int64], at seen: ContentVersion) -> (titles: [Int64: String], labels: [Int64: [String]])? {
        lock.withLock {
            guard version == seen, books.allSatisfy(read.contains) else { return nil }
            var found = (titles: [Int64: String](), labels: [Int64: [String]]())
            for book in books {
                found.titles[book] = titles[book]
                found.labels[book] = labels[book]
            }
            return found
        }
    }

    func keep(books: [Int64], titles: [Int64: String], labels: [Int64: [String]], at seen: ContentVersion) {
        lock.withLock {
            guard at(seen), books.count <= Self.maxBooks else { return }
            if read.count + books.count > Self.maxBooks { empty() }
            read.formUnion(books)
            self.titles.merge(titles) { a, _ in a }
            self.labels.merge(labels) { a, _ in a }
        }
    }
}

/// The content's version as one transaction's snapshot sees it: asked once (sent ahead, the
/// search's first statement), read when first needed.
final class SeenVersion: @unchecked Sendable {
    private let lock = NSLock()
    private var pending: PendingAnswer?
    private var value: ContentVersion?
    private var asked = false

    /// Whether it was asked in this transaction.
    var isAsked: Bool { lock.withLock { asked } }

    func ask(_ send: () throws -> PendingAnswer) rethrows {
        try lock.withLock {
            guard !asked else { return }
            asked = true
            pending = try send()
        }
    }

    /// The version, waiting for its answer if it has not come; nil when it was not asked.
    func read(_ wait: (PendingAnswer) throws -> StatementAnswer) throws -> ContentVersion? {
        let pending: PendingAnswer? = lock.withLock {
            defer { self.pending = nil }
            return value == nil ? self.pending : nil
        }
        if let pending {
            let row = try wait(pending).rows.first
            let found = try row.map { row in
                let (epoch, version) = try row.decode((Int64, Int64).self)
                return ContentVersion(epoch: epoch, version: version)
            }
            lock.withLock { value = found }
        }
        return lock.withLock { value }
    }
}

extension PostgresStore {
    /// Whether this transaction reads from and keeps in the library's memory: a read-only one
    /// (one snapshot for all its statements) of a library that keeps one.
    var usesMemory: Bool { readOnly && memory.keeps }

    /// Sends the ask for the content's version, once a transaction: a search's first statement.
    func askVersion() throws {
        guard usesMemory, !version.isAsked else { return }
        try version.ask { try session.send("SELECT epoch, version FROM content_version", kinds: "") }
    }

    /// The content's version in this transaction's snapshot, when it was asked.
    func contentVersion() throws -> ContentVersion? {
        guard usesMemory, version.isAsked else { return nil }
        return try version.read { try session.wait(for: $0) }
    }

    /// What the memory holds for this transaction's snapshot (`read` at its version); nil while
    /// sending ahead, or when the version was not asked.
    func remembered<T>(_ read: (ContentVersion) -> T?) throws -> T? {
        guard !sent.sending, let seen = try contentVersion() else { return nil }
        return read(seen)
    }

    /// Keeps what a statement answered, at this snapshot's version (not while sending ahead:
    /// nothing was answered then).
    func remember(_ keep: (ContentVersion) -> Void) throws {
        guard !sent.sending, let seen = try contentVersion() else { return }
        keep(seen)
    }

    /// Whether, sending ahead, the memory holds what would be sent (`knows`, at the version it
    /// keeps: whether that is this snapshot's is asked when read, `remembered`), so it is not sent.
    func sendingKnown(_ knows: @autoclosure () -> Bool) -> Bool { sent.sending && usesMemory && knows() }
}

import Foundation
import GRDB
import MarginCore

/// The page index (since v6): the words of every page's folded text (`indexWords`) in a
/// contentless FTS5 table, `page_words` (rowid = page id; positions kept, for phrases), and every
/// word once in `term`, with a trigram index over it, `term_fts`, that finds the words holding a
/// piece of a word ("isotope" in "radioisotopes"). The page text is stored once, in `page`.
///
/// Triggers on `page` only queue what changed (`page_pending`: the page, and the text it had);
/// `sync` turns the queue into index changes in Swift, in the same transaction, at the end of
/// every write. So the index follows any change to `page`, even one made with the sqlite3 shell
/// (then at margin's next write; until then a removed page is skipped and a new one not found).
enum PageWords {
    /// A term matching more words of the vocabulary than this is not asked of the index.
    static let maxExpansions = 5_000
    /// A phrase ending inside a word is asked as a choice of at most this many phrases, one for
    /// each word it may end with (times its first word's spellings); past that, as a prefix.
    static let maxPhrases = 8
    /// A phrase ending inside a word spelled more ways than `maxPhrases` is looked for in the
    /// text of the pages holding the rest of it, when they are at most this many (see
    /// `SQLiteStore.visitPhrasePagesByCore`).
    static let corePages = 500

    /// Applies the queued page changes to the index: a page's words leave with the text it had
    /// when first queued (what the index holds), and its current text, if it still exists, goes in.
    /// `known`: words already worked out for pages inserted (and not changed since) in this
    /// transaction.
    static func sync(_ db: Database, known: [Int64: String] = [:]) throws {
        let rows = try Row.fetchAll(db, sql: "SELECT page, old FROM page_pending ORDER BY seq")
        guard !rows.isEmpty else { return }
        var order = [Int64]()
        var indexed = [Int64: String?]()
        var events = [Int64: Int]()
        for row in rows {
            let page: Int64 = row[0]
            events[page, default: 0] += 1
            if indexed[page] == nil {
                order.append(page)
                indexed[page] = .some(row[1])
            }
        }
        var vocabulary = Set<String>()
        var newWords = [String]()
        for page in order {
            if case .some(.some(let old)) = indexed[page] {
                try db.execute(
                    sql: "INSERT INTO page_words(page_words, rowid, words) VALUES ('delete', ?, ?)",
                    arguments: [page, indexedWords(of: old)])
            }
            // One event, an insert: the page holds the text its words were worked out from.
            if events[page] == 1, case .some(.none) = indexed[page], let words = known[page] {
                try index(page: page, words: words, db, vocabulary: &vocabulary, newWords: &newWords)
            } else if let text = try String.fetchOne(
                db, sql: "SELECT text FROM page WHERE id = ?", arguments: [page])
            {
                try index(page: page, words: indexedWords(of: text), db, vocabulary: &vocabulary, newWords: &newWords)
            }
        }
        // The write's new words, once all its pages are in the index (see `addToVocabulary`).
        try addToVocabulary(newWords, db)
        try db.execute(sql: "DELETE FROM page_pending")
    }

    /// Indexes one page and adds its new words to the vocabulary (`seen`: words known to be there).
    static func insert(page: Int64, text: String, _ db: Database, vocabulary seen: inout Set<String>) throws {
        try insert(page: page, words: indexedWords(of: text), db, vocabulary: &seen)
    }

    /// Indexes one page by its words (`indexedWords`: space-separated) and adds new ones to the
    /// vocabulary. The `ascii` tokenizer splits at ASCII spaces and punctuation only, and a word
    /// holds neither, so FTS5's tokens are exactly these words.
    static func insert(page: Int64, words: String, _ db: Database, vocabulary seen: inout Set<String>) throws {
        var newWords = [String]()
        try index(page: page, words: words, db, vocabulary: &seen, newWords: &newWords)
        try addToVocabulary(newWords, db)
    }

    /// Indexes one page by its words and appends those not in `seen` to `newWords` (for
    /// `addToVocabulary`).
    private static func index(
        page: Int64, words: String, _ db: Database, vocabulary seen: inout Set<String>, newWords: inout [String]
    ) throws {
        try db.cachedStatement(sql: "INSERT INTO page_words(rowid, words) VALUES (?, ?)")
            .execute(arguments: [page, words])
        for piece in words.split(separator: " ") {
            let word = String(piece)
            if seen.insert(word).inserted { newWords.append(word) }
        }
    }

    /// Adds words to the vocabulary (those it has are left), in order, in one statement.
    ///
    /// One statement, not one a word: `term`'s trigger (which indexes the word's trigrams) makes
    /// each insert into `term` open a statement savepoint, and SQLite 3.40's FTS5 writes out
    /// every FTS5 table's pending changes at each savepoint. A word at a time, each new word
    /// wrote the pages indexed since the previous one as a segment of their own (then merged):
    /// a tenth of the time of adding a library went there.
    private static func addToVocabulary(_ words: [String], _ db: Database) throws {
        guard !words.isEmpty else { return }
        let list = String(decoding: try JSONEncoder().encode(words), as: UTF8.self)
        try db.execute(
            sql: "INSERT OR IGNORE INTO term(word) SELECT value FROM json_each(?) ORDER BY key", arguments: [list])
    }

    /// Words of the vocabulary holding `piece` (nil when it is too short for the trigram index:
    /// under three scalars), those ending with it if `suffix`.
    static func vocabulary(
        holding piece: String, suffix: Bool, _ db: Database, known: TermExpressions = TermExpressions()
    ) throws -> [String]? {
        let scalars = Array(piece.unicodeScalars)
        guard scalars.count >= 3 else { return nil }
        let candidates = try known.words(holding: piece, db) {
            try String.fetchAll(
                db.cachedStatement(
                    sql: "SELECT word FROM term WHERE id IN (SELECT rowid FROM term_fts WHERE term_fts MATCH ?)"),
                arguments: [quoted(piece)])
        }
        // The trigram index folds case and may offer more: each word is checked here.
        return candidates.filter { word in
            let letters = Array(word.unicodeScalars)
            if suffix { return letters.count >= scalars.count && Array(letters.suffix(scalars.count)) == scalars }
            return contains(letters, scalars)
        }
    }

    /// The FTS5 expression for pages that may hold every term, `.none` when no page can (a term
    /// has a word no page has), nil when no term can be asked of the index.
    static func expression(
        for terms: [String], _ db: Database, known: TermExpressions = TermExpressions()
    ) throws -> Expression? {
        guard let parts = try termParts(for: terms, db, known: known)?.map(\.part) else { return Expression.none }
        return parts.isEmpty ? nil : .match(parts.joined(separator: " AND "))
    }

    /// Each term's part of the expression (a page must match all of them; terms the index can't
    /// answer have none) with the term it is for, or nil when no page can match. `known`: the
    /// expressions worked out already in this transaction.
    static func termParts(
        for terms: [String], _ db: Database, known: TermExpressions = TermExpressions()
    ) throws -> [(term: String, part: String)]? {
        var parts = [(term: String, part: String)]()
        for term in terms {
            switch try known.expression(
                of: term, db, make: { try expression(for: TermWords(term.unicodeScalars), db, known: known) })
            {
            case .some(.match(let part)): parts.append((term, part))
            case .some(.none): return nil
            case nil: continue
            }
        }
        return parts
    }

    enum Expression: Equatable {
        /// No page holds the terms.
        case none
        case match(String)
    }

    /// One term: a phrase of its words (FTS5 keeps positions), the last a prefix if the term
    /// ends inside a word, the first standing for the vocabulary's words that end with it (or
    /// hold it, for a one-word term) if the term begins inside a word.
    private static func expression(for term: TermWords, _ db: Database, known: TermExpressions) throws -> Expression? {
        var words = term.words
        guard !words.isEmpty else { return nil }
        var firsts = [words[0]]
        var expandedAlone = false
        if term.openStart {
            let alone = words.count == 1
            let expansions = try vocabulary(holding: words[0], suffix: !(alone && term.openEnd), db, known: known)
            if let expansions, expansions.count <= maxExpansions {
                if expansions.isEmpty { return Expression.none }
                firsts = expansions
                expandedAlone = alone
            } else if !alone {
                // Too short or too common to expand: the phrase starts at the next word.
                words.removeFirst()
                firsts = [words[0]]
            } else {
                return nil
            }
        }
        var prefix = term.openEnd && !expandedAlone
        // A phrase ending inside a word: the vocabulary's words starting with its end, when there
        // are few. FTS5 evaluates a prefix by merging the pages of every word starting with it
        // first, however rare the rest of the phrase ("halo…" holds 31,000 pages of 100,000).
        var lasts = [String]()
        if prefix, words.count >= 2,
            let spellings = try vocabulary(startingWith: words[words.count - 1], upTo: maxPhrases / firsts.count, db)
        {
            if spellings.isEmpty { return Expression.none }
            lasts = spellings
            prefix = false
        }
        // An array: joining a slice asks the runtime about its type (a scan of every conformance).
        let rest = Array(words.dropFirst()).joined(separator: " ")
        let middle = words.dropFirst().dropLast()
        let phrases = firsts.flatMap { first in
            lasts.isEmpty
                ? [quoted(rest.isEmpty ? first : first + " " + rest) + (prefix ? "*" : "")]
                : lasts.map { quoted(([first] + middle + [$0]).joined(separator: " ")) }
        }
        return .match(phrases.count == 1 ? phrases[0] : "(" + phrases.joined(separator: " OR ") + ")")
    }

    /// Words of the vocabulary starting with `piece`, in order; nil when there are more than
    /// `limit`.
    static func vocabulary(startingWith piece: String, upTo limit: Int, _ db: Database) throws -> [String]? {
        guard limit > 0 else { return nil }
        // Every word starting with `piece` sorts between it and it followed by the last scalar.
        let words = try String.fetchAll(
            db.cachedStatement(sql: "SELECT word FROM term WHERE word >= ? AND word < ? ORDER BY word LIMIT ?"),
            arguments: [piece, piece + "\u{10FFFF}", limit + 1])
        return words.count > limit ? nil : words
    }

    /// For a part that is one phrase of two or more words ending inside a word
    /// (`"dark matter halo"*`), the phrase without its last word (`"dark matter"`); else nil.
    static func phraseCore(_ part: String) -> String? {
        guard part.hasPrefix("\""), part.hasSuffix("\"*") else { return nil }
        let inner = part.dropFirst().dropLast(2)
        guard !inner.contains("\""), let space = inner.lastIndex(of: " ") else { return nil }
        return "\"" + inner[..<space] + "\""
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingAll("\"", with: "\"\"") + "\""
    }
}

/// The index's expressions of terms worked out in one transaction, and the vocabulary's words
/// holding pieces of them: a search asks for those of the same terms for its tiers (a phrase of
/// its words, then its words) and again for its counts, and each is a look-up in the
/// vocabulary's trigram index (0.2–0.5 ms for a common word). Forgotten when the transaction
/// changes anything. A read may also take them from, and leave them in, what earlier reads of
/// the same library found (`VocabularyAnswers`).
final class TermExpressions {
    private var expressions: [String: PageWords.Expression?] = [:]
    private var holding: [String: [String]] = [:]
    private var changes = 0
    private let shared: VocabularyAnswers?
    /// The vocabulary's state this transaction reads (`VocabularyAnswers.state`), once read.
    private var state: Int64?

    init(shared: VocabularyAnswers? = nil) {
        self.shared = shared
    }

    func expression(
        of term: String, _ db: Database, make: () throws -> PageWords.Expression?
    ) throws -> PageWords.Expression? {
        forgetIfChanged(db)
        if let expression = expressions[term] { return expression }
        if let shared, let known = shared.expression(of: term, at: try sharedState(db)) {
            expressions[term] = known
            return known
        }
        let expression = try make()
        expressions[term] = expression
        if let shared { shared.keep(expression, of: term, at: try sharedState(db)) }
        return expression
    }

    func words(holding piece: String, _ db: Database, find: () throws -> [String]) throws -> [String] {
        forgetIfChanged(db)
        if let words = holding[piece] { return words }
        if let shared, let known = shared.words(holding: piece, at: try sharedState(db)) {
            holding[piece] = known
            return known
        }
        let words = try find()
        holding[piece] = words
        if let shared { shared.keep(words, holding: piece, at: try sharedState(db)) }
        return words
    }

    private func sharedState(_ db: Database) throws -> Int64 {
        if let state { return state }
        let read = try VocabularyAnswers.state(db)
        state = read
        return read
    }

    private func forgetIfChanged(_ db: Database) {
        guard db.totalChangesCount != changes else { return }
        expressions.removeAll()
        holding.removeAll()
        changes = db.totalChangesCount
    }
}

/// What the vocabulary answered to the reads of one library (`TermExpressions`): the
/// expressions of terms and the words holding pieces of them, kept while the vocabulary stays
/// as it was. The vocabulary only grows: a word goes in with the next id (`term` is never
/// written otherwise but by migrations, which run before a library is open), so its largest id
/// tells its state, in one look-up of the id index. A search of terms searched before (the next
/// page of hits, a query refined, another reader of a team server) skips the trigram index:
/// 0.2–0.8 ms a term. Bounded by the words it holds, emptied when full.
final class VocabularyAnswers: @unchecked Sendable {
    private let lock = NSLock()
    private var state: Int64 = -1
    private var expressions: [String: PageWords.Expression?] = [:]
    private var holding: [String: [String]] = [:]
    private var held = 0
    /// At most this many words (of all the lists held); emptied when a list would pass it.
    static let maxWords = 100_000
    /// Whether a library keeps them (unless `MARGIN_PLAIN` names `vocabulary-memory`).
    static let isOn = FastPaths.isOn("vocabulary-memory")

    /// The vocabulary's state in `db`'s snapshot: its largest id (0 when empty).
    static func state(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT coalesce(max(id), 0) FROM term")) ?? 0
    }

    /// The expression of `term` known at the vocabulary's `state` (.some(nil): none), nil when
    /// not known.
    func expression(of term: String, at state: Int64) -> PageWords.Expression?? {
        lock.lock()
        defer { lock.unlock() }
        return self.state == state ? expressions[term] : nil
    }

    func words(holding piece: String, at state: Int64) -> [String]? {
        lock.lock()
        defer { lock.unlock() }
        return self.state == state ? holding[piece] : nil
    }

    func keep(_ expression: PageWords.Expression?, of term: String, at state: Int64) {
        lock.lock()
        defer { lock.unlock() }
        guard prepare(state, adding: 1) else { return }
        expressions[term] = .some(expression)
    }

    func keep(_ words: [String], holding piece: String, at state: Int64) {
        lock.lock()
        defer { lock.unlock() }
        guard prepare(state, adding: words.count + 1) else { return }
        holding[piece] = words
    }

    /// Ready to keep an answer found at `state` (false when it is older than what is kept: a
    /// read that began before another's write saw an older vocabulary).
    private func prepare(_ state: Int64, adding count: Int) -> Bool {
        if state < self.state { return false }
        if state > self.state || held + count > Self.maxWords {
            expressions.removeAll()
            holding.removeAll()
            held = 0
            self.state = state
        }
        guard count <= Self.maxWords else { return false }
        held += count
        return true
    }
}

private func contains(_ haystack: [Unicode.Scalar], _ needle: [Unicode.Scalar]) -> Bool {
    guard needle.count <= haystack.count else { return false }
    if needle.isEmpty { return true }
    for start in 0...(haystack.count - needle.count) where haystack[start] == needle[0] {
        if haystack[start..<start + needle.count].elementsEqual(needle) { return true }
    }
    return false
}

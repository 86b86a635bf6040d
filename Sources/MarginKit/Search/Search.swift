import Foundation
import MarginCore

/// How `search` matches.
public struct SearchOptions: Sendable {
    /// Only this book.
    public var bookId: Int64?
    /// Only books in this folder or a folder in it.
    public var folder: String?
    /// Only books with this tag.
    public var tag: String?
    /// The books searched, from `bookId`, `folder` and `tag` (nil: every book), worked out in the
    /// search's transaction.
    var books: [Int64]?
    /// QUERY is one ICU regular expression, matched against each page's text.
    public var regex = false
    /// Case and accents must match exactly.
    public var caseSensitive = false
    /// Terms must stand as whole words.
    public var wholeWord = false
    /// Search annotations (highlight texts, notes, memos) instead of page text.
    public var annotations = false
    /// At most this many hits; 0 for all.
    public var limit = 50
    /// When the limit cuts the hits short, the pages past it are counted up to this many: past
    /// that "at least 1000 more pages match". A common word costs a count of every page that
    /// holds it otherwise (with the words holding it: "the" is "the", "other", "there"… in the
    /// index), 8 ms in a library of 11,000 pages, and more as the library grows.
    public var countUpTo = 1_000
    /// Seconds the search may take (the server's bound on one request), or nil for no limit.
    public var timeLimit: Double?
    /// Stops the search when its client has gone.
    public var stop: StopSignal?
    /// Also name the books not indexed yet (which the search can't see), read in its transaction.
    public var listUnindexed = false
    /// When hits are few (fewer than `fewHits`), look for queries the library answers better:
    /// each misspelt word replaced by a word of the library a couple of edits away.
    public var suggest = false
    /// Stem the query in this language (ISO 639-1) whatever the books' own; nil: each book's.
    public var lang: String?
    /// Words are also found in their other forms (the same stem, in each book's language), ranked
    /// after the words as typed; off for exact searches (--case-sensitive, --whole-word).
    public var stems = true
    /// When `timeLimit` runs out (set as the search starts).
    var deadline: Date?

    /// Whether the search must stop now: its client went away, or its time is up.
    var isOver: Bool { stop?.isStopped == true || (deadline.map { Date() > $0 } ?? false) }

    /// The error for a search stopped by `isOver`.
    var overError: any Error {
        if stop?.isStopped == true { return CancellationError() }
        return MarginError.timeLimit(
            "the search took longer than \(Int(timeLimit ?? 0)) s, this server's limit: narrow it (rarer words, a phrase, or one book)"
        )
    }

    public init(
        bookId: Int64? = nil, regex: Bool = false, caseSensitive: Bool = false, wholeWord: Bool = false,
        annotations: Bool = false, limit: Int = 50
    ) {
        self.bookId = bookId
        self.regex = regex
        self.caseSensitive = caseSensitive
        self.wholeWord = wholeWord
        self.annotations = annotations
        self.limit = limit
    }
}

/// Books a search could not read all of: pages without a text layer (scans).
public struct Textless: Sendable {
    public var books = 0
    public var pages = 0
    /// The book's title, when `books` is 1.
    public var title: String?
}

/// What a search found, and what it could not look at.
public struct SearchResults: Sendable {
    public var hits: [SearchHit]
    /// Searched books with pages that have no text layer: how many, their pages without text,
    /// and the title when there is one such book.
    public var textless: Textless
    /// The limit cut the results short: more pages match.
    public var more = false
    /// How many more pages match, when the index can tell: exactly for words and phrases,
    /// at most for --case-sensitive and --whole-word (which check each page further).
    public var moreCount: Int?
    public var moreIsExact = false
    /// The count stopped at `SearchOptions.countUpTo`: at least `moreCount` more pages hold the
    /// terms.
    public var moreIsAtLeast = false
    /// Books not indexed yet, in id order, when `SearchOptions.listUnindexed` asks.
    public var unindexed: [Book] = []
    /// Queries like this one that the library answers better, best first (`SearchOptions.suggest`).
    public var suggestions: [String] = []
}

extension Library {
    /// The books a search reads: its book, its folder's and its tag's (all of them that apply);
    /// nil for every book.
    func scope(_ options: SearchOptions, _ store: any StoreReader) throws -> [Int64]? {
        guard options.bookId != nil || options.folder != nil || options.tag != nil else { return nil }
        var query = try booksIn(folder: options.folder, tag: options.tag, store)
        if let bookId = options.bookId { query = query.filter(Book.Fields.id == bookId) }
        return try store.fetch(query.sorted(by: Book.Fields.id.ascending)).compactMap(\.id)
    }
}

/// Fewer hits than this, and a search suggests (when asked to).
public let fewHits = 3

extension Library {
    /// Searches page text (or annotations). Candidates come from the full-text index; every hit
    /// is then checked against the stored page text, so results equal a scan.
    public func search(_ query: String, options: SearchOptions) async throws -> SearchResults {
        guard !query.unicodeScalars.allSatisfy(\.isWhitespace) else {
            throw MarginError.emptyQuery(noWords: false)
        }
        try checkQueryLength(query)
        if try !options.regex && distinctQueryTerms(query, caseSensitive: options.caseSensitive).isEmpty {
            throw MarginError.emptyQuery(noWords: true)
        }
        // One hit more than asked for tells whether the limit cut the results short; with
        // suggestions, enough to tell whether the hits are few (`fewHits`) under a lower limit.
        var options = options
        options.deadline = options.timeLimit.map { Date().addingTimeInterval($0) }
        let limit = options.limit
        if limit > 0 { options.limit = max(limit + 1, options.suggest && !options.annotations ? fewHits : 0) }
        if options.annotations {
            var hits = try await searchAnnotations(query, options: options)
            let more = limit > 0 && hits.count > limit
            if more { hits.removeLast(hits.count - limit) }
            let found = hits
            let labelled = try await repository.read { store in
                var hits = found
                try labelPages(&hits, store)
                return hits
            }
            return SearchResults(hits: labelled, textless: Textless(), more: more)
        }
        return try await repository.read { [options] store in
            var options = options
            options.books = try self.scope(options, store)
            // What the search tells of the books it read whatever it finds (the scanned ones), read
            // with their languages when other forms of a word are looked for, else with the
            // titles of the books hit, at the end (one statement to a server, not two).
            let searched = BooksRead(store, options.books)
            if !options.regex {
                // A server is sent the search's first look-up of words with what it asks of the
                // books searched, with their languages when it may look for other forms of its
                // words: one statement, not two (or three).
                let terms = try distinctQueryTerms(query, caseSensitive: options.caseSensitive)
                let asked = BooksSearched(books: options.books, languages: mayStem(query, options))
                try store.textIndex.lookAhead(containing: indexTerms(terms.map(foldedTerm)), asking: asked)
            }
            var stemmed = [(terms: [String], words: WordTier, books: [Int64]?)]()
            var hits: [SearchHit]
            if options.regex {
                hits = try self.regexHits(query, options: options, store)
            } else {
                (hits, stemmed) = try self.termHits(query, options: options, searched, store)
            }
            // Titles only for the books hit: a large library isn't decoded for a search.
            // In order: the same reads sent ahead and made have the same arguments.
            let ids = Array(Set(hits.map(\.book))).sorted()
            // The reads that close a search, sent together to a server (`sendAhead`).
            let shown = limit > 0 ? Array(hits.prefix(limit)) : hits
            try store.sendAhead { ahead in
                if !searched.isRead { _ = try ahead.searchedBooks(searched.books, languages: false) }
                _ = try ahead.titles(of: ids)
                var labelled = shown
                try labelPages(&labelled, ahead)
                if options.listUnindexed { _ = try ahead.fetch(Self.unindexed) }
            }
            let titles = try store.titles(of: ids)
            for index in hits.indices { hits[index].title = titles[hits[index].book] ?? "" }
            let read = try searched.read()
            var textless = Textless(books: read.textlessBooks, pages: read.textlessPages)
            if textless.books == 1 { textless.title = read.textlessTitle }
            let found = hits.count
            let more = limit > 0 && hits.count > limit
            if more { hits.removeLast(hits.count - limit) }
            try labelPages(&hits, store)
            var results = SearchResults(hits: hits, textless: textless, more: more)
            if options.listUnindexed { results.unindexed = try store.fetch(Self.unindexed) }
            if options.suggest, !options.regex, found < fewHits {
                results.suggestions = try suggestedQueries(for: query, found: found, options: options, store)
            }
            let indexTerms = options.regex ? [] : try distinctQueryTerms(query).map(foldedTerm).map(scalarString)
            let cap = limit + max(1, options.countUpTo)
            // The pages of the first tier, counted as it was read: when they alone reach the cap,
            // so do all the candidates (for a common word, no count of all the pieces).
            let words = indexTerms.filter(isOneIndexWord)
            let first =
                more && !options.regex && !words.isEmpty
                ? try store.textIndex.countCandidatePages(
                    containing: indexTerms, words: .holding(words), books: options.books, cap: cap) : nil
            if more, !options.regex,
                var total = try first.flatMap({ $0 >= cap ? $0 : nil })
                    ?? store.textIndex.countCandidatePages(containing: indexTerms, books: options.books, cap: cap)
            {
                if !stemmed.isEmpty {
                    // Pages holding other forms of the words are not all among the pieces': the
                    // tiers above the pieces, counted apart, are as many at least.
                    var tiers = first ?? 0
                    for tier in stemmed {
                        tiers +=
                            try store.textIndex.countCandidatePages(
                                containing: tier.terms, words: tier.words, books: tier.books, cap: cap) ?? 0
                    }
                    total = min(cap, max(total, tiers))
                }
                results.moreCount = max(0, total - limit)
                results.moreIsAtLeast = total >= cap || !stemmed.isEmpty
                results.moreIsExact =
                    !options.caseSensitive && !options.wholeWord && !results.moreIsAtLeast
                    && wholeWordTerms(query).isEmpty
            }
            return results
        }
    }

    /// The page hits, and the tiers of pages holding other forms of its words that were asked for
    /// (the index's terms, the tier, the books).
    private func termHits(
        _ query: String, options: SearchOptions, _ books: BooksRead, _ store: any StoreReader
    ) throws -> (hits: [SearchHit], stemmed: [(terms: [String], words: WordTier, books: [Int64]?)]) {
        var stemmed = [(terms: [String], words: WordTier, books: [Int64]?)]()
        let terms = try distinctQueryTerms(query, caseSensitive: options.caseSensitive)
        let folded = terms.map(foldedTerm)
        let cased = terms.map(casedTerm)
        // Terms written `=word` stand alone on the page (found as any term, then checked).
        let wholeTerms = wholeWordTerms(query, caseSensitive: options.caseSensitive)
        let whole = terms.indices.map {
            options.wholeWord || wholeTerms.contains(options.caseSensitive ? cased[$0] : folded[$0])
        }
        var hits = [SearchHit]()
        let indexTerms = indexTerms(folded)
        var over = false
        /// Visits a page holding `together` (when given: the words as one phrase) as a word.
        func visit(_ page: PageText, together: [Unicode.Scalar]? = nil) -> Bool {
            if options.isOver {
                over = true
                return false
            }
            func hit<Text: MatchableText>(_ text: Text) -> SearchHit? {
                if let together, text.foldedMatches(together, wholeWord: true, first: true).isEmpty { return nil }
                return pageHit(text, page, folded: folded, cased: cased, whole: whole, options)
            }
            // Most pages are plain ASCII, read as `SearchableText` reads them without building one.
            let found: SearchHit?
            if let plain = PlainText(page.text) {
                found = hit(plain)
            } else {
                found = hit(SearchableText(page.text))
            }
            guard let found else { return true }
            hits.append(found)
            return options.limit == 0 || hits.count < options.limit
        }
        /// A tier's candidate pages, telling the index how many hits the search still takes.
        func pages(_ terms: [String], words: WordTier, books: [Int64]?, visit: (PageText) throws -> Bool) throws {
            guard options.limit > 0 else {
                return try store.textIndex.candidatePages(containing: terms, words: words, books: books, visit: visit)
            }
            try store.textIndex.candidatePages(
                containing: terms, words: words, books: books, wanted: max(1, options.limit - hits.count), visit: visit)
        }
        // Whole words first: the pages holding each one-word term as a word, then those holding
        // another form of them (`StemPlan`), then the rest, each tier in the index's order
        // (`WordTier`).
        let words = indexTerms.filter(isOneIndexWord)
        // Pages shown by a tier, left out of the tiers after it.
        var seen = Set<PageKey>()
        if words.isEmpty {
            try pages(indexTerms, words: .any, books: options.books, visit: { visit($0) })
        } else {
            var going = true
            // Nearness counts: the pages where the words stand together, as the phrase they make
            // in the order typed, come before the others holding them.
            if words.count >= 2, words.count == indexTerms.count, !options.caseSensitive {
                let phrase = words.joined(separator: " ")
                let together = foldedTerm(phrase)
                // What the next tier asks first goes with the phrase's statement, to a server.
                try store.textIndex.lookAhead(containing: indexTerms)
                try store.textIndex.candidatePages(containing: [phrase], books: options.books) { page in
                    let shown = hits.count
                    going = visit(page, together: together)
                    if hits.count > shown { seen.insert(PageKey(page)) }
                    return going
                }
            }
            if going, !over {
                try pages(indexTerms, words: .holding(words), books: options.books) { page in
                    guard seen.isEmpty || !seen.contains(PageKey(page)) else { return true }
                    going = visit(page)
                    return going
                }
            }
            if going, !over, options.stems, !options.caseSensitive, !options.wholeWord {
                let plans = try stemPlans(
                    words.filter(stemmable(query).contains), options: options, languages: books.languages, store)
                for plan in plans where going && !over {
                    // Each term as typed or in another form, standing as a word.
                    let forms = folded.map { term in
                        [term] + (plan.variants[scalarString(term)] ?? []).map { Array($0.unicodeScalars) }
                    }
                    let holding = words.map { [$0] + (plan.variants[$0] ?? []) }
                    // The index is asked for the pieces the forms share ("stud" for "studies"
                    // and "study"); a term whose forms share too little is left to the words.
                    let asked = indexTerms.compactMap { term -> String? in
                        guard let variants = plan.variants[term] else { return term }
                        let shared = variants.reduce(term) { commonPrefix($0, $1) }
                        return shared.unicodeScalars.count >= 3 ? shared : nil
                    }
                    let tier = WordTier(holding: holding, notHolding: words.map { [$0] })
                    stemmed.append((asked, tier, plan.books))
                    try pages(asked, words: tier, books: plan.books) { page in
                        if options.isOver {
                            over = true
                            return false
                        }
                        guard seen.isEmpty || !seen.contains(PageKey(page)) else { return true }
                        let hit: SearchHit?
                        if let plain = PlainText(page.text) {
                            hit = stemHit(plain, page, forms: forms, options)
                        } else {
                            hit = stemHit(
                                SearchableText(page.text), page, forms: forms, options)
                        }
                        guard let hit else { return true }
                        // Shown here, so not again with the rest.
                        seen.insert(PageKey(page))
                        hits.append(hit)
                        going = options.limit == 0 || hits.count < options.limit
                        return going
                    }
                }
            }
            if going, !over {
                try pages(indexTerms, words: .lacking(words), books: options.books) { page in
                    seen.isEmpty || !seen.contains(PageKey(page)) ? visit(page) : true
                }
            }
        }
        if over { throw options.overError }
        return (hits, stemmed)
    }

    /// The hit on a page holding every term in one of its forms (`forms`: the term first, then
    /// its other forms, found as whole words; the terms without others as usual), its kind `stem`.
    private func stemHit<Text: MatchableText>(
        _ text: Text, _ page: PageText, forms: [[[Unicode.Scalar]]], _ options: SearchOptions
    ) -> SearchHit? {
        var all = [[Range<Int>]]()
        for termForms in forms {
            let term = termForms[0]
            let found: [Range<Int>]
            if termForms.count == 1 {
                found = text.foldedMatches(term, wholeWord: false, first: false)
            } else {
                found = termForms.flatMap { text.foldedMatches($0, wholeWord: true, first: false) }
                    .sorted { $0.lowerBound < $1.lowerBound }
            }
            if found.isEmpty { return nil }
            all.append(found)
        }
        let marked = text.snippet(
            marking: all, width: 60, open: SearchHit.markOpen, close: SearchHit.markClose, hyphenated: false)
        var hit = SearchHit(book: page.bookId, title: "", page: page.number, marked: marked, matches: all[0].count)
        hit.matchKind = "stem"
        return hit
    }

    /// The hit on a page holding every term, with a snippet where the terms are together.
    private func pageHit<Text: MatchableText>(
        _ text: Text, _ page: PageText, folded: [[Unicode.Scalar]], cased: [[Unicode.Scalar]], whole: [Bool],
        _ options: SearchOptions
    ) -> SearchHit? {
        // Every match of each term: the first's count them, and all are marked in the snippet.
        func matches(_ index: Int, wholeWord: Bool, first: Bool = false) -> [Range<Int>] {
            options.caseSensitive
                ? text.casedMatches(cased[index], wholeWord: wholeWord, first: first)
                : text.foldedMatches(folded[index], wholeWord: wholeWord, first: first)
        }
        var all = [[Range<Int>]]()
        for index in folded.indices {
            let found = matches(index, wholeWord: whole[index])
            if found.isEmpty { return nil }
            all.append(found)
        }
        let marked = text.snippet(
            marking: all, width: 60, open: SearchHit.markOpen, close: SearchHit.markClose,
            hyphenated: folded.contains { $0.contains("-") })
        // Whole words: each term standing alone somewhere on the page.
        let standsAlone = folded.indices.allSatisfy {
            whole[$0] || !matches($0, wholeWord: true, first: true).isEmpty
        }
        var hit = SearchHit(book: page.bookId, title: "", page: page.number, marked: marked, matches: all[0].count)
        hit.matchKind = standsAlone ? "word" : "piece"
        return hit
    }

    private func regexHits(_ query: String, options: SearchOptions, _ store: any StoreReader) throws -> [SearchHit] {
        let expression = try compileRegex(query, options: options)
        var hits = [SearchHit]()
        let regexTimeLimit = configuration.regexTimeout
        let deadline = min(Date().addingTimeInterval(regexTimeLimit), options.deadline ?? .distantFuture)
        var late: (book: Int64, page: Int)?
        try store.textIndex.scanPages(books: options.books) { page in
            if options.stop?.isStopped == true {
                late = (page.bookId, page.number)
                return false
            }
            let text = page.text as NSString
            guard let matches = boundedMatches(expression, in: page.text, deadline: deadline) else {
                late = (page.bookId, page.number)
                return false
            }
            guard let first = matches.first(where: { $0.range.length > 0 }) ?? matches.first else { return true }
            let marked = regexSnippet(text, match: first.range)
            hits.append(
                SearchHit(book: page.bookId, title: "", page: page.number, marked: marked, matches: matches.count))
            return options.limit == 0 || hits.count < options.limit
        }
        if late != nil, options.isOver { throw options.overError }
        if let late {
            throw MarginError.invalidArgument(
                "the regular expression '\(query)' took longer than \(Int(regexTimeLimit)) s (by page \(late.page) of book \(late.book)): "
                    + "nested repetition such as (a+)+ backtracks without end; simplify it")
        }
        return hits
    }

    /// Searches what readers wrote: highlight texts and notes, memos (through their index), and
    /// the memo on each book.
    func searchAnnotations(_ query: String, options: SearchOptions) async throws -> [SearchHit] {
        let terms = try distinctQueryTerms(query).map(foldedTerm)
        let indexTerms = terms.map(scalarString)
        let wholeTerms = wholeWordTerms(query)
        return try await repository.read { store in
            let books = try self.scope(options, store)
            var hits = [SearchHit]()
            func consider(_ text: String, book: Int64, page: Int?, kind: String, id: Int64?) -> Bool {
                let searchable = SearchableText(text)
                let ranges = terms.map {
                    searchable.foldedMatches($0, wholeWord: options.wholeWord || wholeTerms.contains($0))
                }
                guard let first = ranges.first?.first, ranges.allSatisfy({ !$0.isEmpty }) else { return true }
                hits.append(
                    SearchHit(
                        book: book, title: "", page: page,
                        marked: searchable.snippet(around: first, open: SearchHit.markOpen, close: SearchHit.markClose),
                        matches: ranges[0].count, kind: kind))
                hits[hits.count - 1].annotation = id
                return options.limit == 0 || hits.count < options.limit
            }
            for (kind, id) in try store.textIndex.candidateAnnotations(containing: indexTerms, books: books) {
                if kind == "highlight", let h = try store.find(Highlight.self, id: id) {
                    let text = h.note.map { h.text + "\n" + $0 } ?? h.text
                    if !consider(text, book: h.bookId, page: h.page, kind: "highlight", id: h.id) { break }
                } else if kind == "memo", let m = try store.find(Memo.self, id: id) {
                    if !consider(m.text, book: m.bookId, page: m.page, kind: "memo", id: m.id) { break }
                }
            }
            // Bookmark labels (few, short: read, not indexed).
            if options.limit == 0 || hits.count < options.limit {
                var query = Query<Bookmark>().filter(!Field<Bookmark, String?>("label").isNull)
                if let books { query = query.filter(Field<Bookmark, Int64>("bookId").isIn(books)) }
                for bookmark in try store.fetch(query) {
                    guard let label = bookmark.label else { continue }
                    if !consider(label, book: bookmark.bookId, page: bookmark.page, kind: "bookmark", id: bookmark.id) {
                        break
                    }
                }
            }
            if options.limit == 0 || hits.count < options.limit {
                var query = Query<Book>().filter(!Field<Book, String?>("memo").isNull).sorted(
                    by: Book.Fields.id.ascending)
                if let books { query = query.filter(Book.Fields.id.isIn(books)) }
                for book in try store.fetch(query) {
                    if let memo = book.memo, !consider(memo, book: book.id ?? 0, page: nil, kind: "book memo", id: nil)
                    {
                        break
                    }
                }
            }
            let titles = try store.titles(of: Array(Set(hits.map(\.book))).sorted())
            for index in hits.indices { hits[index].title = titles[hits[index].book] ?? "" }
            return hits
        }
    }
}

func compileRegex(_ pattern: String, options: SearchOptions) throws -> NSRegularExpression {
    let source = options.wholeWord ? "\\b(?:\(pattern))\\b" : pattern
    do {
        return try NSRegularExpression(pattern: source, options: options.caseSensitive ? [] : [.caseInsensitive])
    } catch {
        throw MarginError.invalidArgument("invalid regular expression '\(pattern)': \(describeRegexError(pattern))")
    }
}

/// ICU's errors don't say where; find the first problem we can name.
private func describeRegexError(_ pattern: String) -> String {
    var depth = 0
    var escaped = false
    var inClass = false
    for character in pattern {
        if escaped { escaped = false; continue }
        switch character {
        case "\\": escaped = true
        case "[" where !inClass: inClass = true
        case "]" where inClass: inClass = false
        case "(" where !inClass: depth += 1
        case ")" where !inClass:
            depth -= 1
            if depth < 0 { return "an unmatched ')'" }
        default: break
        }
    }
    if escaped { return "it ends with a lone backslash" }
    if inClass { return "an unclosed '[' character class" }
    if depth > 0 { return "an unclosed '(' group" }
    if let first = pattern.first, "*+?{".contains(first) { return "'\(first)' has nothing to repeat" }
    return "ICU cannot compile it (check quantifiers and escapes)"
}

/// About 60 characters either side of a regex match, white space collapsed, the match marked.
private func regexSnippet(_ text: NSString, match: NSRange) -> String {
    let start = max(0, match.location - 60)
    let end = min(text.length, match.location + match.length + 60)
    let isSpace = { (offset: Int) -> Bool in
        offset >= 0 && offset < text.length
            && CharacterSet.whitespacesAndNewlines.contains(Unicode.Scalar(text.character(at: offset)) ?? "x")
    }
    func flat(_ from: Int, _ to: Int) -> String {
        text.substring(with: NSRange(location: from, length: max(0, to - from)))
            .split(whereSeparator: \.isWhitespace).joined(separator: " ")
    }
    let before = flat(start, match.location)
    let after = flat(match.location + match.length, end)
    return (start > 0 ? "…" : "") + before + (isSpace(match.location - 1) && !before.isEmpty ? " " : "")
        + SearchHit.markOpen + flat(match.location, match.location + match.length) + SearchHit.markClose
        + (isSpace(match.location + match.length) && !after.isEmpty ? " " : "") + after + (end < text.length ? "…" : "")
}

/// Every match of `expression` in `text`, or nil when the deadline passes first: ICU reports
/// progress during a match, so a catastrophic pattern is stopped, not waited for.
func boundedMatches(_ expression: NSRegularExpression, in text: String, deadline: Date) -> [NSTextCheckingResult]? {
    var matches = [NSTextCheckingResult]()
    var late = false
    var checks = 0
    expression.enumerateMatches(
        in: text, options: [.reportProgress], range: NSRange(location: 0, length: (text as NSString).length)
    ) {
        match, _, stop in
        if let match { matches.append(match) }
        checks += 1
        if checks % 64 == 0, Date() > deadline {
            late = true
            stop.pointee = true
        }
    }
    return late ? nil : matches
}

/// Queries like `query` that find more: each of its words (outside quotes, of four letters or
/// more) that the library holds on fewer pages than `fewHits` is replaced by the words of the
/// library's vocabulary fewest edits away (one for words of up to five letters, two for longer
/// ones), the one on most pages first; the query with each word's best, then its second and
/// third (a word's use: the pages holding it as a whole word). Only queries finding more pages
/// than the query did are offered, at most three.
func suggestedQueries(for query: String, found: Int, options: SearchOptions, _ store: any StoreReader) throws
    -> [String]
{
    let index = store.textIndex
    func pages(_ terms: [String]) throws -> Int {
        try index.countCandidatePages(containing: terms, books: options.books, cap: 10_000) ?? 0
    }
    /// A word's replacements, nearest and most used first; none when the library holds it.
    func alternatives(_ word: Substring) throws -> [String] {
        // `=word` stays a whole word.
        if word.hasPrefix("="), word.count > 1 { return try alternatives(word.dropFirst()).map { "=" + $0 } }
        let folded = foldedTerm(String(word))
        guard folded.count >= 4, folded.allSatisfy({ $0.properties.isAlphabetic }),
            try pages([scalarString(folded)]) < fewHits
        else { return [] }
        let limit = folded.count <= 5 ? 1 : 2
        var near = [(word: String, distance: Int, pages: Int)]()
        for candidate in try index.wordsSharingTrigrams(with: scalarString(folded), limit: 200) {
            let distance = editDistance(folded, Array(candidate.unicodeScalars), limit: limit)
            if distance <= limit, distance > 0 { near.append((candidate, distance, 0)) }
        }
        near.sort { ($0.distance, $0.word) < ($1.distance, $1.word) }
        near = Array(near.prefix(12))
        // Counted together by a server (`sendAhead`: one wait for all, not one each).
        try store.sendAhead { ahead in
            for candidate in near { _ = try ahead.textIndex.pagesHoldingWord(candidate.word, cap: 10_000) }
        }
        for at in near.indices { near[at].pages = try index.pagesHoldingWord(near[at].word, cap: 10_000) }
        near = near.filter { $0.pages > 0 }
            .sorted { ($0.distance, -$0.pages, $0.word) < ($1.distance, -$1.pages, $1.word) }
        // After the best, only words in common use (a piece of a hyphenated word is not one).
        let best = near.first?.pages ?? 0
        return near.enumerated().filter { $0.offset == 0 || $0.element.pages >= max(fewHits, best / 10) }
            .prefix(3).map(\.element.word)
    }
    // The query's terms as the parser reads them: a word replaced by its alternatives, a phrase's
    // words by their best.
    var parts = [(text: String, alternatives: [String])]()
    for term in rawTerms(query) {
        guard term.quoted else {
            parts.append((term.text, try alternatives(Substring(term.text))))
            continue
        }
        let words = term.text.split(whereSeparator: \.isWhitespace)
        let best = try words.map { try alternatives($0).first ?? String($0) }
        let phrase = "\"" + words.joined(separator: " ") + "\""
        let corrected = "\"" + best.joined(separator: " ") + "\""
        parts.append((phrase, corrected == phrase ? [] : [corrected]))
    }
    guard parts.contains(where: { !$0.alternatives.isEmpty }) else { return [] }
    var suggestions = [String]()
    for choice in 0..<3 {
        let words = parts.map { part in
            part.alternatives.isEmpty ? part.text : part.alternatives[min(choice, part.alternatives.count - 1)]
        }
        let suggestion = words.joined(separator: " ")
        guard !suggestions.contains(suggestion) else { continue }
        let terms = try distinctQueryTerms(suggestion).map(foldedTerm).map(scalarString)
        if try pages(terms) > found { suggestions.append(suggestion) }
    }
    return suggestions
}

/// Gives each hit its page's printed number, from the guides of the books hit.
private func labelPages(_ hits: inout [SearchHit], _ store: any StoreReader) throws {
    let ids = Array(Set(hits.map(\.book))).sorted()
    guard !ids.isEmpty else { return }
    // Only the labels of the books that label their pages (most have none), not their outlines.
    let labels = try store.pageLabels(of: ids)
    guard !labels.isEmpty else { return }
    for index in hits.indices {
        guard let book = labels[hits[index].book] else { continue }
        hits[index].pageLabel = BookGuide.label(of: hits[index].page, in: book)
    }
}

/// A page, by its book and number.
private struct PageKey: Hashable {
    let book: Int64
    let page: Int

    init(_ page: PageText) {
        book = page.bookId
        self.page = page.number
    }
}

/// The longest start two words share.
private func commonPrefix(_ a: String, _ b: String) -> String {
    String(String.UnicodeScalarView(zip(a.unicodeScalars, b.unicodeScalars).prefix { $0 == $1 }.map(\.0)))
}

/// Other forms of a search's words in one language: the vocabulary's words with the same stem
/// ("study", "studied" for "studies" in English), for the books in that language.
struct StemPlan {
    var language: String
    /// The books written in it (nil: every book the search reads).
    var books: [Int64]?
    /// For each word (folded) with other forms, those forms.
    var variants: [String: [String]]
}

/// How many words starting as a stem does are read to find its forms; past that (a stem that
/// starts a great many words) the word is not stemmed.
let stemVocabulary = 2_000

/// The terms of `query` another form of which may be searched for (folded): those neither
/// quoted nor written `=word`.
func stemmable(_ query: String) -> Set<String> {
    Set(rawTerms(query).filter { !$0.quoted && !$0.text.hasPrefix("=") }.map { scalarString(foldedTerm($0.text)) })
}

/// Whether a search may look for other forms of its words (`stemPlans` asks for the books'
/// languages): a stemmer, no language given, and a word to stem.
func mayStem(_ query: String, _ options: SearchOptions) -> Bool {
    guard options.stems, !options.caseSensitive, !options.wholeWord, options.lang == nil, Stemmers.current != nil,
        let terms = try? distinctQueryTerms(query)
    else { return false }
    let words = Set(terms.map(foldedTerm).map(scalarString).filter(isOneIndexWord)).intersection(stemmable(query))
    return words.contains(where: isStemmed)
}

/// The terms a search asks the index for: its folded terms, each once (terms differing only in
/// case, with --case-sensitive, ask once).
private func indexTerms(_ folded: [[Unicode.Scalar]]) -> [String] {
    var asked = Set<String>()
    return folded.map(scalarString).filter { asked.insert($0).inserted }
}

/// Whether a folded word is one `stemPlans` looks for other forms of.
private func isStemmed(_ word: String) -> Bool {
    word.unicodeScalars.count >= 3 && word.unicodeScalars.allSatisfy { $0.properties.isAlphabetic }
}

/// What a search reads of the books it searched (`StoreReader.searchedBooks`), once: with their
/// languages when other forms of a word are looked for (`languages()`), else without.
final class BooksRead {
    let books: [Int64]?
    private let store: any StoreReader
    private var known: SearchedBooks?
    /// Whether `known` holds their languages.
    private var languagesRead = false

    init(_ store: any StoreReader, _ books: [Int64]?) {
        self.store = store
        self.books = books
    }

    /// Whether it was read.
    var isRead: Bool { known != nil }

    func read() throws -> SearchedBooks {
        if let known { return known }
        let read = try store.searchedBooks(books, languages: false)
        known = read
        return read
    }

    /// Their languages (nil left out), read with the rest (one statement to a server).
    func languages() throws -> [String] {
        if let known, languagesRead { return known.languages }
        let read = try store.searchedBooks(books, languages: true)
        known = read
        languagesRead = true
        return read.languages
    }
}

/// The other forms of `words` (folded one-word terms) in the languages of the books searched
/// (or `options.lang`), in one plan for the books searched; none without a stemmer or forms.
func stemPlans(
    _ words: [String], options: SearchOptions, languages read: () throws -> [String], _ store: any StoreReader
) throws -> [StemPlan] {
    guard let stemmer = Stemmers.current else { return [] }
    let words = words.filter(isStemmed)
    guard !words.isEmpty else { return [] }
    // The languages of the books searched, asked in one statement (cheaper than stemming the
    // vocabulary in every language margin knows, 7 ms for "river"; a count for each language
    // was nine round trips to a team library's server).
    var languages = [String]()
    if let lang = options.lang {
        languages = [lang]
    } else {
        let present = Set(try read())
        languages = Languages.known.filter { present.contains($0) && stemmer.languages.contains($0) }
    }
    // The stems in every language first, so that the vocabulary's words starting as each does
    // are asked together (`vocabularies`: a round trip to a server for all, not one for each).
    let stemmed = languages.compactMap { language in
        stemmer.stems(words, language: language).map { (language, $0) }
    }
    /// Where the vocabulary is read for a stem's other forms: the stem but its last letter,
    /// when three are left ("stud" for "studi", the stem of "studies": "study" is found too).
    func start(of stem: String) -> String? {
        let scalars = stem.unicodeScalars
        let start = scalars.count > 3 ? String(String.UnicodeScalarView(scalars.dropLast())) : stem
        return start.unicodeScalars.count >= 3 ? start : nil
    }
    var starts = [String]()
    for stem in stemmed.flatMap(\.1) {
        if let start = start(of: stem), !starts.contains(start) { starts.append(start) }
    }
    let vocabularies = Dictionary(
        zip(starts, try store.textIndex.vocabularies(startingWith: starts, limit: stemVocabulary)),
        uniquingKeysWith: { a, _ in a })
    var plans = [StemPlan]()
    for (language, stems) in stemmed {
        var variants = [String: [String]]()
        for (word, stem) in zip(words, stems) {
            guard let start = start(of: stem), case .some(.some(let vocabulary)) = vocabularies[start] else { continue }
            let others = vocabulary.filter { $0 != word && isOneIndexWord($0) }
            guard !others.isEmpty, let otherStems = stemmer.stems(others, language: language) else { continue }
            let forms = zip(others, otherStems).filter { $0.1 == stem }.map(\.0)
            if !forms.isEmpty { variants[word] = Array(forms.prefix(64)) }
        }
        guard !variants.isEmpty else { continue }
        plans.append(StemPlan(language: language, books: options.books, variants: variants))
    }
    // One tier for every language of the books: a word's forms in each language the library
    // holds, on all the books searched. Asking for each language's books apart filtered every
    // page of the library through a list of hundreds of books (7 ms for "river" in a library
    // of 406 books in two languages); a page holding another language's form of a word is rare.
    guard plans.count > 1 else { return plans }
    var variants = [String: [String]]()
    for plan in plans {
        for (word, forms) in plan.variants {
            variants[word] = Array(Set(variants[word, default: []] + forms)).sorted()
        }
    }
    return [StemPlan(language: plans.map(\.language).joined(separator: "+"), books: options.books, variants: variants)]
}

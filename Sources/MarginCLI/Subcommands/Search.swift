import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct Search: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "search",
            abstract: "Search the text of the library or of one book.",
            discussion: """
                Words and "quoted phrases" (all must be on the page), case- and accent-insensitive, \
                matching inside words as pdfgrep does (=word: only the whole word, "art" not in \
                "start"); a phrase broken across lines or hyphenated at \
                a line end is still found. Pages are 1-based.

                Words are also found in their other forms, in the languages of the books searched \
                (Snowball's stemmers; each book's language is told from its text, 'margin edit BOOK \
                --lang L' corrects it, --lang L here stems in L alone): "studies" finds "study" and "studied". A "quoted" word \
                or phrase and =word are matched as typed; so is everything with --exact (the pages \
                pdfgrep -i finds), --case-sensitive, --whole-word or --regex. Curly quotes, apostrophes and dashes match the straight \
                ones a keyboard types ("don't" finds "don’t").

                Chinese and Japanese, written without spaces, are indexed as pairs of characters: \
                any run of them is found where it stands ("東京" in "東京タワー"), as a whole word; \
                kana keep their voicing marks ("が" does not find "か"), written apart or not \
                ("ガス" finds half-width "ｶﾞｽ").

                Ranking: first the pages where the words stand together, as the phrase they make \
                in the order typed ("quick brown" on "the quick brown fox"), then the others where \
                each single-word term stands as a whole word, then \
                those holding another form of one (its stem's), then those where one is only inside \
                longer words ("art" in "start"), so neither pushes whole words down; within each, \
                by bm25 (how often the terms are on the page, the rarer terms weighing more, shorter \
                pages first), or in library order when the query matches more than 2,000 pages (a \
                common word). Hits are grouped by book.

                No matches is not an error: the exit status is 0 and stderr says "no matches" \
                (with --json, stdout is []). When --limit cuts the results short, stderr says so.

                --case-sensitive, --whole-word and --regex are exact: every hit is checked against \
                the page text. --regex takes one ICU regular expression.

                With --json a page hit says "matchKind": "word" when every term stands on the page \
                as a whole word somewhere, "stem" when one is there only in another form, "piece" \
                when one is only inside words ("art" in "start"). \
                Snippets go where the most terms are together and mark every match there. A word \
                hyphenated at a line end is shown joined ("computer"), a compound with its hyphen \
                ("applicative-order": a capital after the hyphen, the compound elsewhere on the \
                page, or a query holding the hyphen).

                When hits are few (fewer than 3), a word the library holds on fewer than 3 pages is \
                taken for a misspelling: stderr says "note: did you mean '...'?" with the queries made of \
                the library's nearest words (one edit away for words of up to five letters, two for \
                longer ones; the word on most pages first), also with --json (stdout stays the array \
                of hits). --json --suggest prints {"hits": [...], "suggestions": [...]} instead.

                Examples:
                  margin search "attention is all you need"
                  margin search transformer --book 3 --whole-word
                  margin search "=art history"
                  margin search "attention" --folder papers --tag to-read
                  margin search --regex 'colou?r' --limit 0 --json
                  margin search bayesain --json --suggest
                """
        )

        @Argument(help: "Words and \"quoted phrases\", or a regular expression with --regex.")
        var query: String

        @Option(help: ArgumentHelp("Only this book.", valueName: "BOOK"))
        var book: String?

        @Option(help: ArgumentHelp("Only books in this folder or its subfolders.", valueName: "F"))
        var folder: String?

        @Option(help: ArgumentHelp("Only books with this tag.", valueName: "T"))
        var tag: String?

        @Flag(help: "QUERY is an ICU regular expression.")
        var regex = false

        @Flag(help: "Match case (and accents) exactly.")
        var caseSensitive = false

        @Flag(help: "Match whole words only.")
        var wholeWord = false

        @Flag(help: "Search highlight texts, notes and memos instead of page text.")
        var annotations = false

        @Option(help: ArgumentHelp("At most N hits (0 for all).", valueName: "N"))
        var limit = 50

        @Flag(help: "With --json: {\"hits\": [...], \"suggestions\": [...]} (queries the library answers better).")
        var suggest = false

        @Option(
            help: ArgumentHelp(
                "Find other forms of the words in this language (en, de, fr, …), not the books'.", valueName: "L"))
        var lang: String?

        @Flag(help: "Match the words as typed, not in other forms (as pdfgrep does).")
        var exact = false

        @OptionGroup var global: GlobalOptions

        func validate() throws {
            guard limit >= 0 else { throw ValidationError("--limit must be 0 (all) or more") }
            if regex && annotations { throw ValidationError("--regex and --annotations can't be combined") }
            if let lang, !Languages.known.contains(lang.lowercased()) {
                throw ValidationError(Languages.unknown(lang))
            }
        }

        func run() async throws {
            let library = try global.openLibrary()
            var options = SearchOptions(
                bookId: try await book.asyncMap { try await library.resolve($0).id } ?? nil, regex: regex,
                caseSensitive: caseSensitive, wholeWord: wholeWord, annotations: annotations, limit: limit)
            // A search only reads: books not indexed yet are named, with what indexes them.
            options.folder = folder
            options.tag = tag
            options.lang = lang?.lowercased()
            options.stems = !exact
            options.listUnindexed = !annotations
            options.suggest = !annotations
            let results = try await library.search(query, options: options)
            let unindexed = results.unindexed
            if suggest && global.json {
                try await global.show(SuggestedHits(hits: results.hits, suggestions: results.suggestions)) {}
            } else {
                try await global.show(results.hits) { printHits(results.hits) }
            }
            let scans = results.textless.pages
            if scans > 0 {
                let books = results.textless.title.map { "'\($0)'" } ?? "\(results.textless.books) books"
                global.note(
                    "note: \(pagesText(scans)) of \(books) \(scans == 1 ? "has" : "have") no text layer (scanned?) and \(scans == 1 ? "was" : "were") not searched"
                )
            }
            if !unindexed.isEmpty {
                let names =
                    unindexed.prefix(3).map { "'\($0.title)'" }.joined(separator: ", ")
                    + (unindexed.count > 3 ? ", …" : "")
                // A few by id; many with the command that indexes every book not indexed yet.
                let ids =
                    unindexed.count <= 5 ? " " + unindexed.compactMap(\.id).map(String.init).joined(separator: " ") : ""
                global.note(
                    "note: \(count(unindexed.count, "book")) not searched (\(names)): not indexed yet (search only reads); "
                        + "'margin reindex\(ids)' indexes \(unindexed.count == 1 ? "it" : "them") (fetching the PDF if needed)"
                )
            }
            if results.more {
                let how =
                    results.moreCount.flatMap { count in
                        if results.moreIsExact { return "\(count) more \(count == 1 ? "page matches" : "pages match")" }
                        if !results.moreIsAtLeast { return "up to \(count) more pages match" }
                        // Counted no further; with --case-sensitive/--whole-word not all of them match.
                        return options.caseSensitive || options.wholeWord ? nil : "at least \(count) more pages match"
                    } ?? "more pages match"
                global.note("note: showing the first \(limit) hits; \(how) (--limit N for more, --limit 0 for all)")
            }
            if results.hits.isEmpty { global.note("no matches") }
            // Nothing found because no book is in that folder or has that tag: said.
            if results.hits.isEmpty, folder != nil || tag != nil,
                try await library.list(BookFilter(folder: folder, tag: tag)).isEmpty
            {
                let scope = [folder.map { "in folder '\($0)'" }, tag.map { "tagged '\($0)'" }].compactMap { $0 }
                global.note(
                    "note: no book is \(scope.joined(separator: " and ")) ('margin list' shows folders and tags)")
            }
            if !results.suggestions.isEmpty, !(suggest && global.json) {
                global.note(
                    "note: did you mean " + results.suggestions.map { "'\($0)'" }.joined(separator: " or ") + "?")
            }
        }

        private func printHits(_ hits: [SearchHit]) {
            let bold = Console.stdoutIsTTY
            var order = [Int64]()
            var groups = [Int64: [SearchHit]]()
            for hit in hits {
                if groups[hit.book] == nil { order.append(hit.book) }
                groups[hit.book, default: []].append(hit)
            }
            // Written at once: one write, not two a hit.
            var lines = [String]()
            for (index, id) in order.enumerated() {
                guard let group = groups[id], let first = group.first else { continue }
                if index > 0 { lines.append("") }
                let title = terminalSafe(first.title)
                lines.append(bold ? "\u{1B}[1m\(title)\u{1B}[0m (\(id))" : "\(title) (\(id))")
                for hit in group {
                    let snippet = terminalSafe(hit.marked, keep: ["\u{1}", "\u{2}"])  // SearchHit.markOpen, markClose
                        .replacingAll(SearchHit.markOpen, with: bold ? "\u{1B}[1;33m" : "")
                        .replacingAll(SearchHit.markClose, with: bold ? "\u{1B}[0m" : "")
                    // The printed page number beside margin's when the PDF labels its pages.
                    let printed = hit.pageLabel.map { " (\(terminalSafe($0)))" } ?? ""
                    let place = hit.page.map { "p. \($0)" + printed } ?? (hit.kind ?? "book")
                    lines.append("  \(place.count >= 8 ? place : padded(place, 8)) \(snippet)")
                }
            }
            if !lines.isEmpty { Console.outRaw(lines.joined(separator: "\n")) }
        }
    }
}

/// `search --json --suggest`: the hits and the queries suggested.
struct SuggestedHits: Encodable, Sendable {
    var hits: [SearchHit]
    var suggestions: [String]
}

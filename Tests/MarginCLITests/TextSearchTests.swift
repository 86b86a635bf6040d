import Foundation
import MarginCore
import TestSupport
import Testing

@Suite struct TextSearchTests {
    func library() throws -> Sandbox {
        let box = Sandbox()
        try box.ok(
            "add", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf"), Fixtures.pdf("mixed.pdf"), "--jobs", "1")
        return box
    }

    /// (book title, page) pairs of a search, in order.
    func hits(_ box: Sandbox, _ arguments: String...) throws -> [String] {
        let result = try box.margin.run(["search", "--json"] + arguments)
        #expect(result.status == 0, "\(arguments): \(result)")
        let hits = try #require(try result.json() as? [[String: Any]], "\(result)")
        return hits.map { "\($0.string("title") ?? "?"):\($0.int("page") ?? 0)" }
    }

    @Test func textPrintsPagesWithFormFeeds() throws {
        let box = try library()
        let all = try box.ok("text", "sample").stdout
        let pages = all.components(separatedBy: "\u{0C}")
        #expect(pages.count == 3)
        #expect(pages[1].contains("An inverted index maps each word"))
        let some = try box.ok("text", "sample", "--pages", "3,1").stdout.components(separatedBy: "\u{0C}")
        #expect(some.count == 2)
        #expect(some[0].hasPrefix("Chapter Three"))
        let json = try #require(try box.ok("text", "sample", "--pages", "2-3", "--json").json() as? [[String: Any]])
        #expect(json.map { $0.int("page") } == [2, 3])
        #expect(json[0].string("text")?.contains("Chapter Two") == true)
    }

    @Test func textRejectsBadPages() throws {
        let box = try library()
        #expect(try box.fails("text", "sample", "--pages", "5-2").stderr.contains("backwards"))
        #expect(try box.fails("text", "sample", "--pages", "4").stderr.contains("valid pages are 1-3"))
        #expect(try box.fails("text", "sample", "--pages", "0").stderr.contains("out of range"))
        #expect(try box.fails("text", "sample", "--pages", "x").stderr.contains("not a page list"))
    }

    /// Chinese and Japanese pages (no spaces between their words) are found by any run of their
    /// letters, as words (the whole-word tier), ranked by how often they hold it; kana keep their
    /// voicing marks (が is not か).
    @Test func chineseAndJapaneseAreFoundAsWords() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("cjk.pdf"), Fixtures.pdf("sample.pdf"))
        func found(_ query: String...) throws -> [String] {
            let result = try box.margin.run(["search", "--json"] + query)
            #expect(result.status == 0, "\(query): \(result)")
            return try #require(try result.json() as? [[String: Any]]).map {
                "\($0.int("page") ?? 0):\($0.string("matchKind") ?? "?"):\($0.int("matches") ?? 0)"
            }
        }
        #expect(try found("東京") == ["2:word:2", "3:word:1"])
        #expect(try found("東京タワー") == ["2:word:1"])
        #expect(try found("搜索引擎") == ["1:word:2"])
        #expect(try found("索引") == ["1:word:3"])
        #expect(try found("京") == ["2:word:2", "3:word:2"])
        #expect(try found("が") == ["2:word:2"])
        #expect(try found("がっこう") == ["2:word:1"])
        #expect(try found("tokyo 東京") == ["3:word:1"])
        #expect(try found("\"東京に\"") == ["2:word:1"])
        #expect(try found("大阪").isEmpty)
        // A word against punctuation past ASCII is a whole word ("«index»…in").
        #expect(try found("index", "--book", "chinese") == ["1:word:1"])
        let snippet = try box.ok("search", "タワー").stdout
        #expect(snippet.contains("東京タワーは東京にあります。"), "\(snippet)")
    }

    /// Nearness counts: among the pages holding every word, those where the words stand together
    /// as the phrase they make in the order typed come first (then by bm25); a page holding the
    /// words apart only, or in another order, or inside longer words, comes after.
    @Test func pagesHoldingTheWordsTogetherComeFirst() throws {
        let box = Sandbox()
        let path = box.folder.path + "/near.pdf"
        try Fixtures.makePages(
            path,
            [
                "quick quick quick: a quick dog, a brown cat, quick quick", "the quick brown fox",
                "brown, quick and quick again, quick", "quickbrown quick brownish brown",
            ])
        try box.ok("add", "-q", path)
        func pages(_ query: String...) throws -> [Int] {
            let result = try box.margin.run(["search", "--json"] + query)
            #expect(result.status == 0, "\(query): \(result)")
            return try #require(try result.json() as? [[String: Any]]).compactMap { $0.int("page") }
        }
        let apart = try pages("quick", "--limit", "0")
        #expect(apart.count == 4)
        #expect(try pages("quick brown").first == 2)
        #expect(try pages("quick brown").count == 4)
        #expect(try pages("brown quick").first != 2, "the other order is not the phrase")
        #expect(try pages("fox quick").first == 2, "one page holds both: no phrase needed")
        #expect(try pages("quick brown", "--case-sensitive").count == 4)
    }

    /// Snippets show a compound broken at a line end with its hyphen when it was asked for so,
    /// and a word broken in two joined.
    @Test func snippetsShowCompoundsBrokenAtALineEnd() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("prose.pdf"))
        func snippet(_ query: String) throws -> String {
            let result = try box.margin.run(["search", "--json", query])
            #expect(result.status == 0, "\(query): \(result)")
            return try #require(try result.json() as? [[String: Any]]).first?.string("snippet") ?? ""
        }
        #expect(try snippet("applicative-order").contains("machine; applicative-order evaluation"))
        #expect(try snippet("computer").contains("The computer is a machine"))
        #expect(try snippet("cooperation").contains("and cooperation between"))
    }

    @Test func searchFindsWordsAndPhrasesRankedWithSnippets() throws {
        let box = try library()
        #expect(Set(try hits(box, "fox")) == ["A Sample Paper:1", "A Sample Paper:2", "Mixed Bag:1"])
        #expect(try hits(box, "herons") == ["Field Notes:1"])
        #expect(try hits(box, "absent-word-xyz").isEmpty)
        // Words anywhere on the page, phrases in order.
        #expect(try hits(box, "quick", "--book", "sample").count == 2)
        #expect(try hits(box, "\"lazy dog\"") == ["A Sample Paper:1"])
        #expect(try hits(box, "\"dog lazy\"").isEmpty)
        #expect(try hits(box, "inverted zebra").isEmpty, "all terms must be on the same page")
        let result = try box.ok("search", "--json", "pangram")
        let hit = try #require((try result.json() as? [[String: Any]])?.first)
        #expect(hit.int("book") == 3)
        #expect(hit.string("snippet")?.contains("pangram favourite") == true)
    }

    @Test func phrasesAcrossLinesHyphensAccentsAndCase() throws {
        let box = try library()
        #expect(try hits(box, "\"quick brown fox\"").contains("Mixed Bag:1"), "a phrase broken across lines")
        #expect(try hits(box, "\"inverted index of\"") == ["Mixed Bag:1"], "a word hyphenated at a line end")
        #expect(try hits(box, "CREME BRULEE") == ["Mixed Bag:1"], "case- and accent-insensitive")
        #expect(try hits(box, "café") == ["Mixed Bag:1"])
    }

    @Test func exactModesAreVerified() throws {
        let box = try library()
        #expect(try hits(box, "GRAPH", "--case-sensitive") == ["Mixed Bag:3"])
        #expect(try hits(box, "zebra", "--case-sensitive").isEmpty)
        #expect(try hits(box, "Zebra", "--case-sensitive") == ["A Sample Paper:3"])
        #expect(try hits(box, "graph") == ["Mixed Bag:3"])
        #expect(try hits(box, "raph", "--whole-word").isEmpty, "inside a word is not a whole word")
        #expect(try hits(box, "graphs", "--whole-word") == ["Mixed Bag:3"])
        #expect(try hits(box, "colou?r", "--regex") == ["Mixed Bag:3"])
        #expect(try hits(box, "^Chapter T(wo|hree)", "--regex") == ["A Sample Paper:2", "A Sample Paper:3"])
        #expect(try hits(box, "chapter", "--regex", "--case-sensitive").isEmpty)
        #expect(try hits(box, "the", "--limit", "2").count == 2)
        #expect(try hits(box, "the", "--limit", "0").count > 2)
    }

    @Test func searchErrorsAndNotes() throws {
        let box = try library()
        #expect(try box.fails("search", "  ").stderr.contains("query is empty"))
        let regex = try box.fails("search", "--regex", "(unclosed")
        #expect(regex.stderr.contains("invalid regular expression"))
        #expect(regex.stderr.contains("unclosed '('"))
        try box.fails("search", "fox", "--book", "no-such-book")
        // A page with no text layer is counted and said.
        let scan = try box.ok("search", "fox", "--book", "mixed")
        #expect(scan.stderr.contains("1 page of 'Mixed Bag' has no text layer (scanned?) and was not searched"))
        let shown = try #require(try box.ok("show", "mixed", "--json").json() as? [String: Any])
        #expect(shown.int("textlessPages") == 1)
    }

    @Test func humanOutputGroupsByBook() throws {
        let box = try library()
        let out = try box.ok("search", "fox").stdout
        let lines = out.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        #expect(lines.filter { $0.hasPrefix("A Sample Paper (1)") }.count == 1)
        #expect(lines.contains { $0.hasPrefix("  p. 1 ") })
        #expect(!out.contains("\u{1B}"), "no escape codes when stdout is not a terminal")
    }

    @Test func annotationSearchFindsBookMemos() throws {
        let box = try library()
        try box.ok("edit", "field", "--memo", "Remember the heron colony by the mill")
        let hits = try #require(try box.ok("search", "--annotations", "--json", "HERON").json() as? [[String: Any]])
        #expect(hits.count == 1)
        #expect(hits.first?.string("kind") == "book memo")
        #expect(hits.first?.string("title") == "Field Notes")
    }

    @Test func removingABookRemovesItsPagesFromTheIndex() throws {
        let box = try library()
        try box.ok("rm", "field")
        #expect(try hits(box, "herons").isEmpty)
        try box.ok("add", Fixtures.pdf("second.pdf"))
        #expect(try hits(box, "herons").count == 1)
    }

    /// An old library's books are not indexed: search (which only reads) names them and says
    /// what to run, `text` reads them from the cached PDF without storing anything, and
    /// `reindex` indexes them.
    @Test func reindexRebuildsAndOldLibrariesAreNamedBySearch() throws {
        let box = Sandbox()
        // A library made by the first schema version: no page text at all.
        try FileManager.default.createDirectory(atPath: box.home + "/cache", withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.root + "/fixtures/db/v1.sqlite", toPath: box.home + "/library.sqlite")
        for name in ["sample.pdf", "second.pdf", "untitled-notes.pdf"] {
            let sha = try sha256(Fixtures.pdf(name))
            let folder = box.home + "/cache/pdfs/" + sha.prefix(2)
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: Fixtures.pdf(name), toPath: folder + "/" + sha + ".pdf")
        }
        let unindexed = try box.ok("search", "herons")
        #expect(unindexed.stdout.isEmpty, "\(unindexed)")
        #expect(
            unindexed.stderr.contains("3 books not searched") && unindexed.stderr.contains("'margin reindex 1 2 3'"),
            "\(unindexed)")
        #expect(FileManager.default.fileExists(atPath: box.home + "/library.sqlite.bak-1"), "a backup before migrating")
        let text = try box.ok("text", "field", "--pages", "1")
        #expect(text.stdout.contains("Herons"), "\(text)")
        let status = try #require(try box.ok("db", "status", "--json").json() as? [String: Any])
        #expect((status["counts"] as? [String: Any])?["pages"] as? Int == 0, "reading text stored nothing: \(status)")
        #expect(try box.ok("search", "herons").stderr.contains("3 books not searched"))
        let reindexed = try box.ok("reindex", "--json")
        #expect((try reindexed.json() as? [Any])?.count == 3)
        #expect(try hits(box, "herons") == ["Field Notes:1"])
    }

    func sha256(_ path: String) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        process.arguments = [path]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.start()
        let data = pipe.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(String(decoding: data, as: UTF8.self).prefix(64))
    }
}

/// A query the library barely answers gets the queries it answers better: each misspelt word
/// replaced by the library's nearest words, the same on both backends.
@Suite struct SearchSuggestionTests {
    static let cases: [(query: String, suggestions: [String])] = [
        ("invertd", ["inverted"]),
        ("qiuck brwon", ["quick brown"]),
        ("\"invertd index\"", ["\"inverted index\""]),
        ("zebra crosings", ["zebra crossings"]),
        ("Marginalai", ["marginalia"]),
    ]

    func suggestions(_ run: ([String]) throws -> RunResult, _ query: String) throws -> [String] {
        let answer = try #require(try run(["search", query, "--json", "--suggest"]).json() as? [String: Any])
        #expect(answer["hits"] is [Any], "\(answer)")
        return try #require(answer["suggestions"] as? [String])
    }

    @Test func misspeltWordsAreSuggestedTheLibrarysOwn() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf"))
        for (query, expected) in Self.cases {
            #expect(try suggestions({ try box.ok($0) }, query) == expected, "\(query)")
            // Said on stderr, also under --json (stdout stays the array of hits).
            let plain = try box.ok("search", query, "--json")
            #expect(plain.stdout.hasPrefix("["), "\(plain.stdout)")
            let said = expected.map { "'\($0)'" }.joined(separator: " or ")
            #expect(plain.stderr.contains("note: did you mean \(said)?"), "\(query): \(plain.stderr)")
        }
        // Nothing near, or enough hits: nothing suggested.
        for query in ["zzqxv", "quick", "the"] {
            #expect(try suggestions({ try box.ok($0) }, query).isEmpty, "\(query)")
            #expect(!(try box.ok("search", query)).stderr.contains("did you mean"), "\(query)")
        }
        // Only in the book asked about: its words, not another book's.
        #expect(try suggestions({ try box.ok($0) }, "heronz").isEmpty == false)
        #expect(
            try box.ok("search", "heronz", "--book", "1", "--json", "--suggest").stdout.contains(
                "\"suggestions\" : [\n\n  ]"))
    }

    /// The same suggestions from the team helper (`MARGIN_TEAM_HELPER`), which asks for a
    /// word's near words, and then for their pages, in one wait each.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func theTeamHelperSuggestsTheSame() throws {
        let box = Sandbox()
        let url = try TestCluster.freshDatabase()
        let team = ["MARGIN_LIBRARY": url]
        let helped = team.merging(["MARGIN_TEAM_HELPER": "0.2"]) { $1 }
        func run(_ environment: [String: String]) -> ([String]) throws -> RunResult {
            { arguments in
                let result = try box.margin.run(arguments, environment: environment)
                #expect(result.status == 0, "\(arguments): \(result)")
                return result
            }
        }
        _ = try run(team)(["add", "-q", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf")])
        for (query, expected) in Self.cases {
            #expect(try suggestions(run(helped), query) == expected, "\(query)")
        }
        for query in ["zzqxv", "quick", "the"] {
            #expect(try suggestions(run(helped), query).isEmpty, "\(query)")
        }
        let status = try run(helped)(["db", "status", "--json"]).json() as? [String: Any]
        let helper = status?["helper"] as? [String: Any]
        TeamHelperTests.stopHelper(helper?["pid"] as? Int)
        #expect((helper?["answered"] as? Int ?? 0) > 0, "\(String(describing: status))")
    }

    /// Hits are few by how many pages match, not by how many a lower --limit shows: "studied"
    /// is on 18 pages of Think Stats (as itself and as "studies"), so nothing is suggested under
    /// --limit 1 (it once was: "did you mean 'studies'?"), though it is for a word on one page.
    @Test(Prerequisite.needs(Fixtures.corpus != nil, "../shared/corpus is absent"))
    func aLowLimitDoesNotMakeHitsFew() throws {
        let corpus = try #require(Fixtures.corpus)
        let box = Sandbox()
        try box.ok("add", "-q", corpus + "/real/thinkstats2__thinkstats2.pdf")
        for limit in ["1", "2", "3", "0"] {
            let plain = try box.ok("search", "studied", "--limit", limit)
            #expect(!plain.stderr.contains("did you mean"), "--limit \(limit): \(plain.stderr)")
            #expect(
                try suggestions({ try box.ok($0 + ["--limit", limit]) }, "studied").isEmpty, "--limit \(limit)")
        }
        #expect(try box.ok("search", "studied", "--limit", "1").stdout.contains("p. "))
        #expect(try suggestions({ try box.ok($0 + ["--limit", "1"]) }, "statisticz").first == "statistics")
    }

    @Test func editsAreCountedAsReadersMakeThem() {
        func distance(_ a: String, _ b: String, limit: Int = 3) -> Int {
            editDistance(Array(a.unicodeScalars), Array(b.unicodeScalars), limit: limit)
        }
        #expect(distance("bayesian", "bayesian") == 0)
        #expect(distance("bayesain", "bayesian") == 1, "two letters swapped are one edit")
        #expect(distance("netwrk", "network") == 1)
        #expect(distance("probabilty", "probability") == 1)
        #expect(distance("kitten", "sitting") == 3)
        #expect(distance("kitten", "sitting", limit: 2) == 3, "past the limit: limit + 1")
        #expect(distance("a", "abcdef", limit: 2) == 3)
        #expect(distance("", "ab") == 2 && distance("é", "e") == 1)
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aTeamLibrarySuggestsTheSame() throws {
        let team = try TeamUsersTests.Team()
        _ = try team.alice(["add", "-q", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf")])
        for (query, expected) in Self.cases {
            #expect(try suggestions({ try team.alice($0) }, query) == expected, "\(query)")
        }
    }
}

/// `search --folder F --tag T`: only those books' pages are searched, ranked and counted, on
/// both backends and in the reader's API.
@Suite struct SearchFilterTests {
    /// A library of three books: sample in papers/ml tagged to-read, second in papers, prose in none.
    static func filed(_ run: ([String]) throws -> RunResult) throws {
        _ = try run(["add", "-q", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf"), Fixtures.pdf("prose.pdf")])
        _ = try run(["edit", "1", "--folder", "papers/ml", "--tag", "to-read"])
        _ = try run(["edit", "2", "--folder", "papers"])
        _ = try run(["highlight", "add", "1", "--text", "quick brown fox", "--page", "1", "--note", "the fox"])
        _ = try run(["highlight", "add", "3", "--text", "paying customers", "--note", "the customers"])
    }

    static func books(_ run: ([String]) throws -> RunResult, _ arguments: [String]) throws -> [Int] {
        let hits = try #require(
            try run(["search", "the", "--json", "--limit", "0"] + arguments).json() as? [[String: Any]])
        return Set(hits.compactMap { $0["book"] as? Int }).sorted()
    }

    static func check(_ run: ([String]) throws -> RunResult) throws {
        #expect(try books(run, []) == [1, 2, 3])
        #expect(try books(run, ["--folder", "papers"]) == [1, 2], "a folder holds its subfolders")
        #expect(try books(run, ["--folder", "papers/ml"]) == [1])
        #expect(try books(run, ["--folder", "papers/"]) == [1, 2], "written with a slash")
        #expect(try books(run, ["--tag", "to-read"]) == [1])
        #expect(try books(run, ["--folder", "papers", "--tag", "to-read"]) == [1])
        #expect(try books(run, ["--folder", "nowhere"]).isEmpty)
        #expect(
            try run(["search", "the", "--folder", "nowhere", "--tag", "to-read"]).stderr.contains(
                "note: no book is in folder 'nowhere' and tagged 'to-read'"))
        #expect(try books(run, ["--book", "3", "--folder", "papers"]).isEmpty)
        // The count past the limit is the scope's.
        let all = try #require(
            try run(["search", "the", "--json", "--limit", "0", "--folder", "papers"]).json() as? [Any])
        let cut = try run(["search", "the", "--limit", "1", "--folder", "papers"])
        #expect(
            cut.stderr.contains("\(all.count - 1) more \(all.count - 1 == 1 ? "page matches" : "pages match")"),
            "\(cut.stderr)")
        // Annotations too.
        let notes = try #require(
            try run(["search", "the", "--annotations", "--json", "--folder", "papers"]).json() as? [[String: Any]])
        #expect(notes.compactMap { $0["book"] as? Int } == [1], "\(notes)")
    }

    @Test func onlyTheFolderAndTagAsked() throws {
        let box = Sandbox()
        try Self.filed { try box.ok($0) }
        try Self.check { try box.ok($0) }
    }

    /// The reader's API and its library page take the same filters (and suggest).
    @Test func theReaderFiltersItsSearches() throws {
        let box = Sandbox()
        try Self.filed { try box.ok($0) }
        let server = try RunningServer(box)
        defer { _ = server.stop() }
        let (status, body) = try fetch(server.url + "/api/search?q=the&limit=0&folder=papers")
        #expect(status == 200, "\(body)")
        let hits = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]])
        #expect(Set(hits.compactMap { $0["book"] as? Int }) == [1, 2])
        let (_, tagged) = try fetch(server.url + "/api/search?q=the&limit=0&tag=to-read")
        let taggedHits = try #require(try JSONSerialization.jsonObject(with: Data(tagged.utf8)) as? [[String: Any]])
        #expect(Set(taggedHits.compactMap { $0["book"] as? Int }) == [1])
        let (_, page) = try fetch(server.url + "/?q=herons&folder=papers%2Fml")
        #expect(page.contains("No matches.") && page.contains("in papers/ml"), "\(page)")
        let (_, other) = try fetch(server.url + "/?q=herons&folder=papers")
        #expect(other.contains("Field Notes") && !other.contains("No matches."))
        let (_, misspelt) = try fetch(server.url + "/?q=qiuck")
        #expect(misspelt.contains("Did you mean <a href=\"/?q=quick\">quick</a>?"), "\(misspelt)")
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aTeamLibraryFiltersTheSame() throws {
        let team = try TeamUsersTests.Team()
        try Self.filed { try team.alice($0) }
        try Self.check { try team.alice($0) }
    }
}

/// Each page hit says whether its terms stand on the page as whole words or only inside words.
@Suite struct MatchKindTests {
    @Test func wholeWordsAndPiecesAreToldApart() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("sample.pdf"))
        func kinds(_ arguments: String...) throws -> [String] {
            let hits = try #require(try box.ok(["search"] + arguments + ["--json"]).json() as? [[String: Any]])
            return hits.map { $0["matchKind"] as? String ?? "none" }
        }
        #expect(try kinds("quick") == ["word", "word"])
        #expect(try kinds("uick") == ["piece", "piece"])
        #expect(try kinds("quick rown") == ["piece", "piece"], "one term inside a word")
        #expect(try kinds("\"quick brown\"") == ["word", "word"])
        #expect(try kinds("uick", "--whole-word").isEmpty)
        #expect(try kinds("--regex", "qu.ck") == ["none", "none"], "a regular expression says nothing")
        #expect(try kinds("Zebra", "--case-sensitive") == ["word"])
    }
}

/// Whole words first: pages holding every one-word term as a word rank above pages holding it
/// only inside longer words, however often; both backends the same.
@Suite struct WordTierTests {
    /// Page 1 says "art" once among other words; page 2 holds it eight times inside words; page 3
    /// holds "art" and "war" as words, page 4 "artwork" and "war".
    static let pages = [
        "Notes on the art of printing\nand other matters of the day",
        "start start start part party\nsmart starting restart",
        "A war of art and a war of words",
        "An artwork at war with itself\nstart part",
    ]

    static func check(_ run: ([String]) throws -> RunResult) throws {
        func pages(_ arguments: String...) throws -> [String] {
            let hits = try #require(
                try run(["search"] + arguments + ["--json", "--limit", "0"]).json() as? [[String: Any]])
            return hits.map { "p\($0["page"] ?? "?") \($0["matchKind"] ?? "-")" }
        }
        let art = try pages("art")
        #expect(Array(art.prefix(2)).sorted() == ["p1 word", "p3 word"], "\(art)")
        #expect(Array(art.suffix(2)).sorted() == ["p2 piece", "p4 piece"], "\(art)")
        #expect(try pages("art war") == ["p3 word", "p4 piece"])
        // Short words, which the index can't find inside others, come first too.
        let of = try pages("of")
        #expect(of.first == "p3 word" || of.first == "p1 word", "\(of)")
        // The limit takes the first tier's first; the count past it is of every page.
        let cut = try run(["search", "art", "--limit", "1"])
        #expect(cut.stdout.contains("p. 1") || cut.stdout.contains("p. 3"), "\(cut.stdout)")
        #expect(cut.stderr.contains("3 more pages match"), "\(cut.stderr)")
    }

    @Test func wholeWordsRankFirst() throws {
        let box = Sandbox()
        let path = box.folder.path + "/tiers.pdf"
        try Fixtures.makePages(path, Self.pages)
        try box.ok("add", "-q", path)
        try Self.check { try box.ok($0) }
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aTeamLibraryRanksTheSame() throws {
        let team = try TeamUsersTests.Team()
        let path = team.aliceBox.folder.path + "/tiers.pdf"
        try Fixtures.makePages(path, Self.pages)
        _ = try team.alice(["add", "-q", path])
        try Self.check { try team.alice($0) }
    }
}

/// Typography folded in pages, queries and annotations: what a keyboard types finds what a
/// typesetter set (curly quotes and apostrophes, dashes), on both backends, and in libraries
/// made before (their folded text folded again by a migration).
@Suite struct TypographyTests {
    static let page = "Don’t panic — it’s only “typeset” text\nThe years 1990–2000 were the ‘best’"

    static func check(_ run: ([String]) throws -> RunResult) throws {
        func count(_ arguments: String...) throws -> Int {
            try #require(try run(["search"] + arguments + ["--json"]).json() as? [Any]).count
        }
        #expect(try count("don't") == 1)
        #expect(try count("it's only") == 1)
        #expect(try count("“it’s only”") == 1, "typographic quotes make a phrase")
        #expect(try count("\"it's only\"") == 1)
        #expect(try count("“only typeset”") == 0, "a quote between")
        #expect(try count("1990-2000") == 1)
        #expect(try count("panic - it's") == 1)
        #expect(try count("'best'") == 1)
        #expect(try count("=don =t") == 1, "the apostrophe still separates words")
        _ = try run(["highlight", "add", "1", "--text", "Don’t panic", "--page", "1"])
        _ = try run(["memo", "add", "1", "It’s fine – really"])
        let found = try #require(
            try run(["search", "--annotations", "don't", "--json"]).json() as? [[String: Any]])
        #expect(found.map { $0["kind"] as? String } == ["highlight"])
        #expect(try count("--annotations", "it's fine - really") == 1)
    }

    @Test func whatAKeyboardTypesFindsWhatATypesetterSet() throws {
        let box = Sandbox()
        let path = box.folder.path + "/typeset.pdf"
        try Fixtures.makePages(path, [Self.page])
        try box.ok("add", "-q", path)
        try Self.check { try box.ok($0) }
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aTeamLibraryFoldsTheSame() throws {
        let team = try TeamUsersTests.Team()
        let path = team.aliceBox.folder.path + "/typeset.pdf"
        try Fixtures.makePages(path, [Self.page])
        _ = try team.alice(["add", "-q", path])
        try Self.check { try team.alice($0) }
    }

    /// A library made before typography was folded: a page with a curly apostrophe and a soft
    /// hyphen, and a memo with curly quotes, its folded text as folded then.
    @Test func aLibraryMadeBeforeIsFoldedAgain() throws {
        let box = Sandbox()
        try FileManager.default.createDirectory(atPath: box.home, withIntermediateDirectories: true)
        let database = box.home + "/library.sqlite"
        try FileManager.default.copyItem(atPath: Fixtures.root + "/fixtures/db/v10.sqlite", toPath: database)
        let edit = try runProcess(
            "/usr/bin/sqlite3",
            [
                database,
                "UPDATE page SET text = text || char(10) || 'the na' || char(173) || 'tional archive’s door' "
                    + "WHERE id = (SELECT min(id) FROM page WHERE bookId = 1); "
                    + "UPDATE memo SET text = 'Don’t lose “this”', norm = 'don’t lose “this”' "
                    + "WHERE id = (SELECT min(id) FROM memo);",
            ])
        #expect(edit.status == 0, "\(edit.stderr)")
        let national = try #require(try box.ok("search", "national", "--json").json() as? [[String: Any]])
        #expect(national.map { $0["matchKind"] as? String } == ["word"], "a soft hyphen joins the word")
        #expect((try box.ok("search", "=national", "--json").json() as? [Any])?.count == 1)
        #expect((try box.ok("search", "archive's door", "--json").json() as? [Any])?.count == 1)
        let memo = try #require(
            try box.ok("search", "--annotations", "don't lose", "--json").json() as? [[String: Any]])
        #expect(memo.map { $0["kind"] as? String } == ["memo"])
        let old = try #require(try box.ok("search", "inverted index", "--json").json() as? [[String: Any]])
        #expect(old.filter { $0["book"] as? Int == 1 }.map { $0["page"] as? Int } == [2], "the rest as it was")
    }

    /// The same in a team library made at the schema before (postgres-v11.sql).
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aTeamLibraryMadeBeforeIsFoldedAgain() throws {
        let url = try TestCluster.freshDatabase()
        let restore = try runProcess(
            "/usr/bin/psql",
            [url, "-q", "-X", "-v", "ON_ERROR_STOP=1", "-f", Fixtures.root + "/fixtures/db/postgres-v11.sql"])
        #expect(restore.status == 0, "\(restore.stderr)")
        try TestCluster.psql(
            url,
            "SET search_path = margin; "
                + "UPDATE page SET text = text || E'\\nthe na\\u00ADtional archive’s door', "
                + "norm = norm || E' the na\\u00ADtional archive’s door', words = words + 5 "
                + "WHERE id = (SELECT min(id) FROM page WHERE \"bookId\" = 1); "
                + "UPDATE memo SET text = 'Don’t lose “this”', norm = 'don’t lose “this”' "
                + "WHERE id = (SELECT min(id) FROM memo);")
        let box = Sandbox()
        func json(_ arguments: String...) throws -> [[String: Any]] {
            let result = try box.margin.run(arguments + ["--json"], environment: ["MARGIN_LIBRARY": url])
            #expect(result.status == 0, "\(arguments): \(result)")
            return try #require(try result.json() as? [[String: Any]])
        }
        #expect(try json("search", "national").map { $0["matchKind"] as? String } == ["word"])
        #expect(try json("search", "=national").count == 1)
        #expect(try json("search", "archive's door").count == 1)
        #expect(try json("search", "--annotations", "don't lose").map { $0["kind"] as? String } == ["memo"])
        let words = try TestCluster.psql(
            url, "SELECT count(*) FROM margin.word WHERE word IN ('national', 'na', 'tional', 'archive’s')")
        #expect(words == "1", "the vocabulary holds the page's words as they are now")
    }
}

/// Other forms of the words (Snowball's stemmers, in each book's language): ranked after the
/// words as typed, before pieces of words; off for quoted words, =word and --exact; `edit --lang`
/// and `search --lang` choose the language; both backends the same.
@Suite struct StemmingTests {
    static let english = [
        "This is one of the studies that we have made on the subject,\nand it was not easy to do.",
        "A study of the students and their work, which is by far the best.",
        "The student studied the matter with care; it was worth it.",
        "Nothing here but the word sturdy and a studio for the art.",
    ]
    static let german = [
        "Die Häuser der Stadt sind nicht alt, und das ist auch gut so.",
        "Das Haus steht am Markt und ist nicht groß, aber es ist alt.",
        "Wir sind mit dem Zug in die Stadt gefahren, und es war nicht weit.",
    ]

    static func check(_ run: ([String]) throws -> RunResult, folder: String) throws {
        let english = folder + "/english.pdf"
        let german = folder + "/german.pdf"
        try Fixtures.makePages(english, Self.english)
        try Fixtures.makePages(german, Self.german)
        _ = try run(["add", "-q", english])
        _ = try run(["add", "-q", german])
        let books = try #require(try run(["list", "--json"]).json() as? [[String: Any]])
        #expect(books.map { $0["lang"] as? String } == ["en", "de"], "told from the text")
        func pages(_ arguments: String...) throws -> [String] {
            let hits = try #require(
                try run(["search"] + arguments + ["--json", "--limit", "0"]).json() as? [[String: Any]])
            return hits.map { "\($0["book"] ?? "?")p\($0["page"] ?? "?") \($0["matchKind"] ?? "-")" }
        }
        let studies = try pages("studies")
        #expect(studies.first == "1p1 word", "\(studies)")
        #expect(Set(studies.dropFirst()) == ["1p2 stem", "1p3 stem"], "study, studied: \(studies)")
        let study = try pages("study")
        #expect(study.first == "1p2 word" && Set(study.dropFirst()) == ["1p1 stem", "1p3 stem"], "\(study)")
        #expect(try pages("study", "--exact") == ["1p2 word"], "as typed")
        #expect(try pages("\"studies\"") == ["1p1 word"], "a quoted word as typed")
        #expect(try pages("=studies") == ["1p1 word"])
        #expect(try pages("studies", "--whole-word") == ["1p1 word"])
        // Beside a word that is not stemmed, each is needed.
        #expect(try pages("studies subject") == ["1p1 word"])
        #expect(try pages("studied care") == ["1p3 word"])
        #expect(try pages("study care") == ["1p3 stem"])
        // German: Häuser is a form of Haus; in English it only holds the piece.
        #expect(try pages("haus") == ["2p2 word", "2p1 stem"])
        #expect(try pages("haus", "--lang", "en") == ["2p2 word", "2p1 piece"])
        _ = try run(["edit", "2", "--lang", "en"])
        #expect(try pages("haus") == ["2p2 word", "2p1 piece"], "the language set by hand")
        let info = try #require(try run(["show", "2", "--json"]).json() as? [String: Any])
        #expect((info["book"] as? [String: Any] ?? info)["lang"] as? String == "en")
        _ = try run(["edit", "2", "--lang", "auto"])
        #expect(try pages("haus") == ["2p2 word", "2p1 stem"], "told from the text again")
        // The count past the limit holds the other forms' pages too: at least.
        let cut = try run(["search", "study", "--limit", "1"])
        #expect(cut.stderr.contains("at least 2 more pages match"), "\(cut.stderr)")
    }

    @Test func otherFormsRankAfterTheWordsAsTyped() throws {
        let box = Sandbox()
        try Self.check({ try box.ok($0) }, folder: box.folder.path)
        let wrong = try box.fails("edit", "1", "--lang", "xx")
        #expect(wrong.stderr.contains("'xx' is not a language margin knows"), "\(wrong.stderr)")
        let search = try box.fails("search", "study", "--lang", "klingon")
        #expect(search.stderr.contains("is not a language margin knows"), "\(search.stderr)")
        // The reader's search: other forms unless `exact`; `lang` as on the command line.
        let server = try RunningServer(box)
        defer { _ = server.stop() }
        func kinds(_ query: String) throws -> [String] {
            let (status, body) = try fetch(server.url + "/api/search?limit=0&q=" + query)
            #expect(status == 200, "\(body)")
            let hits = try #require(try JSONSerialization.jsonObject(with: Data(body.utf8)) as? [[String: Any]])
            return hits.map { "\($0["book"] ?? "?")p\($0["page"] ?? "?") \($0["matchKind"] ?? "-")" }
        }
        #expect(try kinds("study").count == 3)
        #expect(try kinds("study&exact=1") == ["1p2 word"])
        #expect(try kinds("haus&lang=en") == ["2p2 word", "2p1 piece"])
        let (status, body) = try fetch(server.url + "/api/search?q=haus&lang=xx")
        #expect(status == 400 && body.contains("is not a language margin knows"), "\(status) \(body)")
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aTeamLibraryStemsTheSame() throws {
        let team = try TeamUsersTests.Team()
        try Self.check({ try team.alice($0) }, folder: team.aliceBox.folder.path)
    }

    /// A library made before languages were told: each book's is told from its pages on upgrade.
    @Test func aLibraryMadeBeforeIsToldItsLanguages() throws {
        let box = Sandbox()
        try FileManager.default.createDirectory(atPath: box.home, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.root + "/fixtures/db/v11.sqlite", toPath: box.home + "/library.sqlite")
        let books = try #require(try box.ok("list", "--json").json() as? [[String: Any]])
        let sample = try #require(books.first { $0["title"] as? String == "A Sample Paper" })
        #expect(sample["lang"] as? String == "en")
    }
}

/// `=word`: that term only as a whole word; the others as before.
@Suite struct WholeWordTermTests {
    @Test func anEqualsSignAsksForTheWholeWord() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("prose.pdf"), Fixtures.pdf("sample.pdf"))
        func pages(_ arguments: String...) throws -> [String] {
            let hits = try #require(
                try box.ok(["search"] + arguments + ["--json", "--limit", "0"]).json() as? [[String: Any]])
            return hits.map { "\($0["book"] ?? "?") p\($0["page"] ?? "?") \($0["matchKind"] ?? "-")" }
        }
        #expect(try pages("art") == ["1 p1 piece"], "inside 'started'")
        #expect(try pages("=art").isEmpty)
        #expect(try pages("=started") == ["1 p1 word"])
        #expect(try pages("=started", "--case-sensitive") == ["1 p1 word"])
        #expect(try pages("=Started", "--case-sensitive").isEmpty)
        // Beside other terms, which still match inside words.
        #expect(try pages("=started ustomer") == ["1 p1 piece"])
        #expect(try pages("=started =ustomer").isEmpty)
        // Inside quotes, an equals sign is text; alone, it is a term.
        #expect(try pages("\"=started\"").isEmpty)
        _ = try box.ok("search", "=", "--json")
        // A whole word's count past the limit is at most the pages holding the piece.
        let cut = try box.ok("search", "=the", "--limit", "1")
        #expect(cut.stderr.contains("up to") || !cut.stderr.contains("more pages match"), "\(cut.stderr)")
        // Suggested as a whole word too.
        let said = try box.ok("search", "=qiuck", "--json", "--suggest").stdout
        #expect(said.contains("\"=quick\""), "\(said)")
    }
}

import Foundation
import MarginCore
import TestSupport
import Testing

/// A team library on PostgreSQL through the CLI: two machines (each its own MARGIN_HOME, so its
/// own cache) share one database.
@Suite struct TeamLibraryTests {
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func twoMachinesShareBooksFilesAndAnnotations() throws {
        let url = try TestCluster.freshDatabase()
        let first = Sandbox()
        let second = Sandbox()
        let team = ["MARGIN_LIBRARY": url]
        func run(_ box: Sandbox, _ arguments: String...) throws -> RunResult {
            let result = try box.margin.run(arguments, environment: team)
            #expect(result.status == 0, "\(arguments): \(result)")
            return result
        }
        let initialized = try run(first, "db", "init", "--json")
        #expect((try initialized.json() as? [String: Any])?["pending"] as? [String] == [])
        try run(first, "add", "-q", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf"))

        // The other machine sees the books, searches them, and reads a PDF it never had: the
        // file comes from the database into its own cache.
        let books = try #require(try run(second, "list", "--json").json() as? [[String: Any]])
        #expect(Set(books.compactMap { $0["title"] as? String }) == ["A Sample Paper", "Field Notes"])
        let sample = try #require(books.first { $0["title"] as? String == "A Sample Paper" }?["id"] as? Int)
        // Listing and showing the books fetch no PDF: not on this machine yet, so not cached.
        func pdfs(_ box: Sandbox) -> [String] {
            (FileManager.default.enumerator(atPath: box.home)?.allObjects as? [String] ?? []).filter {
                $0.hasSuffix(".pdf")
            }
        }
        #expect(books.allSatisfy { $0["cached"] as? Bool == false && $0["file"] is NSNull }, "\(books)")
        let shown = try #require(try run(second, "show", String(sample), "--json").json() as? [String: Any])
        #expect(shown["cached"] as? Bool == false && shown["file"] is NSNull, "\(shown)")
        #expect(pdfs(second).isEmpty, "\(pdfs(second))")
        let hits = try #require(try run(second, "search", "inverted index", "--json").json() as? [[String: Any]])
        #expect(hits.map { $0["page"] as? Int } == [2])
        let image = second.folder.path + "/p2.png"
        try run(second, "render", String(sample), "--page", "2", "-o", image)
        #expect(FileManager.default.fileExists(atPath: image))
        // Rendering brought the one PDF it drew: now cached here, the other not.
        #expect(pdfs(second).count == 1, "\(pdfs(second))")
        let after = try #require(try run(second, "list", "--json").json() as? [[String: Any]])
        for book in after {
            let here = book["id"] as? Int == sample
            #expect(book["cached"] as? Bool == here, "\(book)")
            #expect(
                here ? (book["file"] as? String)?.hasPrefix(second.home) == true : book["file"] is NSNull, "\(book)")
        }
        let cached = try #require(try run(second, "path", String(sample)).stdout.split(separator: "\n").first)
        #expect(cached.hasPrefix(second.home), "the copy is in the second machine's cache: \(cached)")

        // The same bytes added on the other machine are the same book.
        let again = try #require(
            try run(second, "add", Fixtures.pdf("sample.pdf"), "--tag", "team", "--json").json() as? [[String: Any]])
        #expect(again.first?["duplicate"] as? Bool == true)
        #expect(try #require(try run(first, "list", "--json").json() as? [Any]).count == 2)

        // An annotation made on one machine is listed on the other.
        try run(second, "highlight", "add", String(sample), "--text", "quick brown fox", "--page", "1")
        let highlights = try #require(try run(first, "highlight", "list", "--json").json() as? [[String: Any]])
        #expect(highlights.map { $0["text"] as? String } == ["quick brown fox"])
        let check = try run(first, "db", "check")
        #expect(check.stdout.contains("integrity     ok"), "\(check)")
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func anUnreachableDatabaseIsOneClearError() throws {
        let box = Sandbox()
        let result = try box.fails("list", "--library", "postgres://nobody@127.0.0.1:1/none")
        #expect(result.stderr.contains("cannot open the library at postgres://nobody@127.0.0.1:1/none"), "\(result)")
        #expect(result.stderr.contains("connection refused"), "\(result)")
    }

    /// SQLite → PostgreSQL → SQLite: the JSON export is the same at each step, copying again
    /// changes nothing, and the last library searches and renders (its index and files came along).
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func dbCopyRoundTripsLosslessly() throws {
        let url = try TestCluster.freshDatabase()
        let original = Sandbox()
        try original.ok("add", "-q", Fixtures.pdf("sample.pdf"), "--tag", "reading")
        try original.ok("add", "-q", Fixtures.pdf("second.pdf"))
        try original.ok(
            "highlight", "add", "1", "--text", "inverted index", "--occurrence", "1", "--note", "the core idea")
        try original.ok("memo", "add", "2", "--page", "1", "herons!")
        try original.ok("bookmark", "add", "1", "3", "--label", "rendering")
        func export(_ box: Sandbox, _ environment: [String: String] = [:]) throws -> String {
            let result = try box.margin.run(["export", "--all", "--format", "json"], environment: environment)
            #expect(result.status == 0, "\(result)")
            // All but the moment of the export.
            return result.stdout.split(separator: "\n").filter { !$0.contains("\"exportedAt\"") }.joined(
                separator: "\n")
        }
        let before = try export(original)

        let copied = try original.ok("db", "copy", "--to", url, "--json")
        let report = try #require(try copied.json() as? [String: Any])
        #expect(report["books"] as? Int == 2 && report["highlights"] as? Int == 1 && report["filesAdded"] as? Int == 2)
        let team = Sandbox()
        let onTeam = ["MARGIN_LIBRARY": url]
        // On the team library the annotations are the copying role's (the cluster's "postgres").
        let role = "\"author\" : \"postgres\""
        #expect(try export(team, onTeam).components(separatedBy: role).count == 4)
        #expect(try export(team, onTeam).replacingOccurrences(of: role, with: "\"author\" : null") == before)
        // Again: nothing changes, no file is added.
        let again = try #require(try original.ok("db", "copy", "--to", url, "--json").json() as? [String: Any])
        #expect(again["filesAdded"] as? Int == 0)
        #expect(try export(team, onTeam).replacingOccurrences(of: role, with: "\"author\" : null") == before)

        let back = Sandbox()
        let returned = try team.margin.run(["db", "copy", "--to", back.home, "--json"], environment: onTeam)
        #expect(returned.status == 0, "\(returned)")
        #expect(try export(back) == before)
        let hits = try #require(try back.ok("search", "herons", "--json").json() as? [[String: Any]])
        #expect(hits.first?["page"] as? Int == 1, "the page text came along and is indexed")
        try back.ok("render", "1", "--page", "1", "-o", back.folder.path + "/p1.png")
        #expect(try back.ok("db", "check").stdout.contains("text index    ok"))
    }

    /// A team database dropped and made again under its name: the PDFs this machine still has
    /// cached for it are uploaded again, so the others can read them.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aCopyIntoADatabaseMadeAgainStoresThePDFsThere() throws {
        let url = try TestCluster.freshDatabase()
        let admin = try #require(TestCluster.url)
        let name = try #require(url.split(separator: "/").last.map(String.init))
        let original = Sandbox()
        try original.ok("add", "-q", Fixtures.pdf("sample.pdf"))
        try original.ok("db", "copy", "--to", url)
        try TestCluster.psql(admin, "DROP DATABASE \(name) WITH (FORCE)")
        try TestCluster.psql(admin, "CREATE DATABASE \(name)")
        let again = try #require(try original.ok("db", "copy", "--to", url, "--json").json() as? [String: Any])
        #expect(again["filesAdded"] as? Int == 1, "\(again)")
        #expect(try TestCluster.psql(url, "SELECT count(*) FROM margin.file") == "1")
    }

    @Test func copyingALibraryOntoItselfIsRefused() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("sample.pdf"))
        let refused = try box.fails("db", "copy", "--to", box.home)
        #expect(refused.stderr.contains("--to names the library being copied"), "\(refused)")
    }
}

/// `sslmode` in the URL, checked from the server's side (pg_stat_ssl): margin's connection is
/// encrypted when asked, and a certificate it can't trust is refused for verify-full.
@Suite struct TeamLibraryTLSTests {
    static var ready: Bool {
        TestCluster.available && ProcessInfo.processInfo.environment["MARGIN_TEST_POSTGRES_CA"] != nil
    }

    @Test(Prerequisite.needs(ready, "needs the TLS-enabled cluster scripts/with-postgres.sh starts (with openssl)"))
    func sslmodeChoosesTLS() throws {
        let url = try TestCluster.freshDatabase()
        let authority = try #require(ProcessInfo.processInfo.environment["MARGIN_TEST_POSTGRES_CA"])
        let box = Sandbox()
        func status(_ query: String) throws -> RunResult {
            try box.margin.run(["db", "status", "--json"], environment: ["MARGIN_LIBRARY": url + "?" + query])
        }
        for (query, encrypted) in [
            ("sslmode=require", true), ("sslmode=disable", false), ("sslmode=prefer", true),
            ("sslmode=verify-full&sslrootcert=\(authority)", true),
        ] {
            let result = try status(query)
            #expect(result.status == 0, "\(query): \(result)")
            let json = try #require(try result.json() as? [String: Any])
            #expect(json["tls"] as? Bool == encrypted, "\(query)")
            #expect(json["user"] as? String == "postgres")
        }
        let untrusted = try status("sslmode=verify-full")
        #expect(untrusted.status != 0 && untrusted.stderr.contains("certificate is not trusted"), "\(untrusted)")
        let wrong = try status("sslmode=sometimes")
        #expect(wrong.status != 0 && wrong.stderr.contains("sslmode=sometimes is not one of"), "\(wrong)")
    }
}

/// The same searches on both backends: the same hits in every mode and, for words, pieces of
/// words and phrases, the same ranking (BM25 as SQLite's FTS5 works it out, each word a piece
/// stands for weighed apart).
@Suite struct BackendSearchParityTests {
    /// PostgreSQL's page words (`margin.page_words`, which its trigger indexes pages with) are the
    /// words Swift's `indexWords` gives SQLite's index, with their counts: for a text of every
    /// scalar there is, one after another, and for text as pages hold it.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func pageWordsAreSplitAsSwiftSplitsThem() throws {
        let url = try TestCluster.freshDatabase()
        #expect(try Sandbox().margin.run(["list"], environment: ["MARGIN_LIBRARY": url]).status == 0)
        var every = String.UnicodeScalarView()
        for value in UInt32(1)...0x10FFFF {
            if let scalar = Unicode.Scalar(value) { every.append(scalar) }
        }
        let texts = [
            String(every), "«index»…in l'ete - 東京タワーは東京、がっこう a東b unicode文字列 ｶﾞ 한국어 x²+y³ ①② ǅ",
        ]
        for text in texts {
            let encoded = Data(text.utf8).base64EncodedString()
            let rows = try TestCluster.psqlFile(
                url,
                "COPY (SELECT word, count FROM margin.page_words(convert_from(decode('\(encoded)', 'base64'), 'UTF8'))) TO STDOUT"
            ).split(separator: "\n")
            var database = [String: Int]()
            for row in rows {
                let fields = row.split(separator: "\t", omittingEmptySubsequences: false)
                database[String(fields[0]), default: 0] += Int(fields[1]) ?? -1
            }
            var swift = [String: Int]()
            for word in indexWords(text.unicodeScalars) { swift[word, default: 0] += 1 }
            #expect(database.count == swift.count)
            let differing = Set(database.keys).union(swift.keys).filter { database[$0] != swift[$0] }
            #expect(
                differing.isEmpty,
                "\(differing.prefix(20).map { ($0.unicodeScalars.map { String($0.value, radix: 16) }, database[$0], swift[$0]) })"
            )
            // A page's pairs (`margin.page_pairs`, v16) are those of the words Swift splits a
            // phrase into, side by side (Chinese and Japanese letters split them as well).
            var words = [String]()
            var word = String.UnicodeScalarView()
            for scalar in text.unicodeScalars {
                if isIndexWordScalar(scalar) && !isBigramScalar(scalar) {
                    word.append(scalar)
                } else if !word.isEmpty {
                    words.append(String(word))
                    word = String.UnicodeScalarView()
                }
            }
            if !word.isEmpty { words.append(String(word)) }
            let pairs = zip(words, words.dropFirst()).map { "\($0) \($1)" }.joined(separator: "\n")
            #expect(!pairs.isEmpty)
            let encodedPairs = Data(pairs.utf8).base64EncodedString()
            let same = try TestCluster.psqlFile(
                url,
                """
                SELECT (SELECT array_agg(h ORDER BY h) FROM unnest(margin.page_pairs(convert_from(decode('\(encoded)', 'base64'), 'UTF8'))) h)
                    = (SELECT array_agg(h ORDER BY h) FROM (SELECT DISTINCT margin.word_pair(split_part(l, ' ', 1), split_part(l, ' ', 2)) AS h
                        FROM regexp_split_to_table(convert_from(decode('\(encodedPairs)', 'base64'), 'UTF8'), '\\n') l) AS x)
                """)
            #expect(same.trimmingCharacters(in: .whitespacesAndNewlines) == "t")
        }
    }

    /// A phrase's pages are found by the pairs of its words side by side (v16), which the
    /// database makes from a page's text whatever a writer sends: with a page's pairs emptied
    /// behind the trigger's back (as only the cluster's superuser can), the phrase is not found
    /// on it, where the words' groups (`MARGIN_PLAIN=phrase-pairs`) and the text still find it;
    /// pairs written by hand are made again from the text, and a page's new text brings its own.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func phrasesAreFoundByPairsTheDatabaseMakes() throws {
        let url = try TestCluster.freshDatabase()
        let box = Sandbox()
        let team = ["MARGIN_LIBRARY": url]
        #expect(try box.margin.run(["add", "-q", Fixtures.pdf("sample.pdf")], environment: team).status == 0)
        // The migration made the pairs of no page and left the new table's statistics unmade:
        // made on an empty table, they had `db copy` check each page's words against the whole
        // table (974 s for the bench library, not 55).
        #expect(try TestCluster.psql(url, "SELECT reltuples FROM pg_class WHERE oid = 'margin.page'::regclass") == "-1")
        func pages(_ query: String, _ environment: [String: String] = [:]) throws -> [Int] {
            let result = try box.margin.run(
                ["search", query, "--json"], environment: team.merging(environment) { $1 })
            #expect(result.status == 0, "\(query): \(result)")
            return try #require(try result.json() as? [[String: Any]]).compactMap { $0["page"] as? Int }
        }
        let groups = ["MARGIN_PLAIN": "phrase-pairs"]
        let text = ["MARGIN_PLAIN": "page-words,phrase-words"]
        let found = try pages("\"inverted index\"")
        #expect(!found.isEmpty)
        #expect(try pages("\"inverted index\"", groups) == found)
        #expect(try pages("\"inverted index\"", text) == found)
        #expect(try pages("\"nverted inde\"") == found, "edges inside words")
        #expect(
            try TestCluster.psql(url, "SELECT count(*) FROM margin.page WHERE pairs IS NULL OR pairs = '{}'") == "0")

        try TestCluster.psql(
            url,
            "ALTER TABLE margin.page DISABLE TRIGGER page_pairs; UPDATE margin.page SET pairs = '{}'; "
                + "ALTER TABLE margin.page ENABLE TRIGGER page_pairs")
        #expect(try pages("\"inverted index\"").isEmpty, "the pairs are what finds a phrase's pages")
        #expect(try pages("\"inverted index\"", groups) == found)
        #expect(try pages("\"inverted index\"", text) == found)

        try TestCluster.psql(url, "UPDATE margin.page SET pairs = '{1,2,3}'")
        #expect(try pages("\"inverted index\"") == found, "pairs written are made again from the text")
        try TestCluster.psql(
            url,
            "UPDATE margin.page SET norm = norm || ' quokka marmalade', text = text || ' Quokka marmalade' "
                + "WHERE number = 1")
        #expect(try pages("\"quokka marmalade\"") == [1])
        #expect(try pages("\"marmalade quokka\"").isEmpty)
        #expect(try pages("\"marmalade quokka\"", text).isEmpty)
    }

    /// Page labels stored damaged (no JSON, as only the library's owner can write behind the
    /// triggers) leave a team search going, its hits shown by page number; a damaged outline is
    /// one clear error naming the book.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aDamagedGuideIsReadWithoutItsLabels() throws {
        let url = try TestCluster.freshDatabase()
        let box = Sandbox()
        let team = ["MARGIN_LIBRARY": url]
        #expect(try box.margin.run(["add", "-q", Fixtures.pdf("outlined.pdf")], environment: team).status == 0)
        func hits() throws -> [[String: Any]] {
            let result = try box.margin.run(["search", "motivation", "--json"], environment: team)
            #expect(result.status == 0, "\(result)")
            return try #require(try result.json() as? [[String: Any]])
        }
        #expect(try hits().first?["pageLabel"] as? String == "1")
        try TestCluster.psql(url, "UPDATE margin.guide SET labels = '[1,'")
        let found = try hits()
        #expect(found.first?["page"] as? Int == 3 && found.first?["pageLabel"] as? String == nil, "\(found)")
        try TestCluster.psql(url, "UPDATE margin.guide SET outline = '{'")
        let failed = try box.margin.run(["toc", "1"], environment: team)
        #expect(failed.status != 0)
        #expect(failed.stderr.hasPrefix("error: the outline stored for book 1 is damaged"), "\(failed)")
    }

    /// A term found inside other words ranks as SQLite's FTS5 ranks it there: each word holding
    /// it (`matrix`, `darstellungsmatrix`) a phrase of the query with its own weight and its own
    /// saturation, so a page with a rare word holding the term twice and the term once (long)
    /// comes before one with the term five times (short). Until schema v17 PostgreSQL summed the
    /// words' counts into one frequency a term and put them the other way round (the same hits,
    /// another order: bench/RESULTS.md, stop 54); it ranks each word apart now, by its count and
    /// the page's length beside it (`page_word.length`).
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aTermInsideOtherWordsRanksAsOnSQLite() throws {
        let folder = TemporaryFolder()
        let pdf = folder.path + "/compounds.pdf"
        func filler(_ words: Int) -> String {
            let greek = ["alpha", "beta", "gamma", "delta", "epsilon", "zeta", "eta", "theta", "iota", "kappa"]
            return stride(from: 0, to: words, by: 10).map { start in
                (start..<min(words, start + 10)).map { greek[$0 % 10] }.joined(separator: " ")
            }.joined(separator: "\n")
        }
        let texts =
            [
                "matrix darstellungsmatrix darstellungsmatrix\n" + filler(300),
                "matrix matrix matrix matrix matrix\n" + filler(60),
                "matrix\n" + filler(150),
            ] + (0..<7).map { _ in filler(100) }
        let (personal, team, onTeam) = try Self.bothLibraries(holding: pdf, pages: texts)
        func pages(_ box: Sandbox, _ environment: [String: String]) throws -> [Int] {
            let result = try box.margin.run(["search", "matrix", "--json"], environment: environment)
            #expect(result.status == 0, "\(result)")
            return try #require(try result.json() as? [[String: Any]]).compactMap { $0["page"] as? Int }
        }
        let sqlite = try pages(personal, [:])
        let postgres = try pages(team, onTeam)
        // FTS5's bm25 ("matrix" on 3 pages of 10: weight 0.76; "darstellungsmatrix" on 1: 1.85): page 1,
        // 0.76 × sat(1) + 1.85 × sat(2) on 303 words = 2.27, before page 2, 0.76 × sat(5) on 65 = 1.45.
        // PostgreSQL: page 1's 3 against page 2's 5, one weight: page 2 first.
        #expect(sqlite == [1, 2, 3])
        #expect(postgres == sqlite)
    }

    /// A search taking a few hits has PostgreSQL send only the best ranked pages; when it turns
    /// all of those down (here, the pages holding "Alpha" only, for a case-sensitive "alpha"),
    /// the rest come in the same order as SQLite's.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aSearchPastTheBestPagesSentFindsTheRest() throws {
        let folder = TemporaryFolder()
        let pdf = folder.path + "/ranked.pdf"
        let filler = "beta gamma delta epsilon zeta eta theta iota kappa lambda"
        // Pages 1–20: "Alpha" 24 down to 5 times, ranked first; pages 21–40: "alpha" once.
        let texts =
            (0..<20).map { Array(repeating: "Alpha", count: 24 - $0).joined(separator: " ") + "\n" + filler }
            + (0..<20).map { "alpha \($0 % 3 == 0 ? "beta" : "gamma")\n" + filler }
        let (personal, team, onTeam) = try Self.bothLibraries(holding: pdf, pages: texts)
        func pages(_ box: Sandbox, _ environment: [String: String], _ arguments: [String]) throws -> [Int] {
            let result = try box.margin.run(["search", "alpha", "--json"] + arguments, environment: environment)
            #expect(result.status == 0, "\(result)")
            return try #require(try result.json() as? [[String: Any]]).compactMap { $0["page"] as? Int }
        }
        let allSent = onTeam.merging(["MARGIN_PLAIN": "best-pages"]) { $1 }
        for arguments in [
            ["--case-sensitive", "--limit", "5"], ["--limit", "5"], ["--case-sensitive", "--limit", "30"],
        ] {
            let sqlite = try pages(personal, [:], arguments)
            #expect(try pages(team, onTeam, arguments) == sqlite, "\(arguments)")
            #expect(try pages(team, allSent, arguments) == sqlite, "\(arguments)")
        }
        #expect(try pages(personal, [:], ["--case-sensitive", "--limit", "5"]) == [21, 22, 23, 24, 25])
        #expect(try pages(personal, [:], ["--limit", "3"]) == [1, 2, 3])
    }

    /// A search of every hit read in library order (a word on every page, not ranked) reads its
    /// batches ahead past the second: the same hits in the same order as SQLite's and as without.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aLongScanReadAheadFindsEveryPageInOrder() throws {
        let folder = TemporaryFolder()
        let texts = (1...700).map { "page \($0) of a book read to its end" }
        let (personal, team, onTeam) = try Self.bothLibraries(holding: folder.path + "/long.pdf", pages: texts)
        func pages(_ box: Sandbox, _ environment: [String: String]) throws -> [Int] {
            let result = try box.margin.run(["search", "of", "--json", "--limit", "0"], environment: environment)
            #expect(result.status == 0, "\(result)")
            return try #require(try result.json() as? [[String: Any]]).compactMap { $0["page"] as? Int }
        }
        let sqlite = try pages(personal, [:])
        #expect(sqlite == Array(1...700))
        #expect(try pages(team, onTeam) == sqlite)
        #expect(try pages(team, onTeam.merging(["MARGIN_PLAIN": "read-ahead"]) { $1 }) == sqlite)
    }

    /// A personal library and a team library (a fresh database) each holding a PDF of these
    /// pages, made at `pdf`; the team's settings (`MARGIN_LIBRARY`).
    static func bothLibraries(holding pdf: String, pages: [String]) throws -> (Sandbox, Sandbox, [String: String]) {
        try Fixtures.makePages(pdf, pages)
        let onTeam = ["MARGIN_LIBRARY": try TestCluster.freshDatabase()]
        let personal = Sandbox()
        let team = Sandbox()
        try personal.ok("add", "-q", pdf)
        #expect(try team.margin.run(["add", "-q", pdf], environment: onTeam).status == 0)
        return (personal, team, onTeam)
    }

    static let files = [
        "sample.pdf", "second.pdf", "prose.pdf", "prose-revised.pdf", "layout.pdf", "word-export.pdf",
        "untitled-notes.pdf", "sample-revised.pdf", "sample-v2.pdf", "cjk.pdf",
    ]

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func searchesAnswerTheSameOnSQLiteAndPostgreSQL() throws {
        let url = try TestCluster.freshDatabase()
        let personal = Sandbox()
        let team = Sandbox()
        let onTeam = ["MARGIN_LIBRARY": url]
        // One at a time: both libraries number the books alike.
        for file in Self.files {
            try personal.ok("add", "-q", Fixtures.pdf(file))
            #expect(try team.margin.run(["add", "-q", Fixtures.pdf(file)], environment: onTeam).status == 0)
        }
        func hits(_ box: Sandbox, _ environment: [String: String], _ arguments: [String]) throws -> [String] {
            let result = try box.margin.run(["search"] + arguments + ["--json"], environment: environment)
            #expect(result.status == 0, "\(arguments): \(result)")
            return try #require(try result.json() as? [[String: Any]]).map {
                "\($0["book"] as? Int ?? 0):\($0["page"] as? Int ?? 0) \($0["snippet"] as? String ?? "")"
            }
        }
        let ranked: [[String]] = [
            ["quick brown"], ["index"], ["fox"], ["margin"], ["a"], ["of"], ["\"inverted index\""],
            ["fox", "--case-sensitive"], ["Fox", "--case-sensitive"], ["in", "--whole-word"],
            ["fox", "--limit", "2"],
            // Chinese and Japanese (pairs of letters), and words against punctuation past ASCII.
            ["東京"], ["東京タワー"], ["索引"], ["京"], ["が"], ["tokyo 東京"], ["\"東京に\""],
            // Words together as a phrase first.
            ["brown quick"], ["inverted index"], ["the fox"], ["fox the"],
        ]
        for query in ranked {
            #expect(try hits(personal, [:], query) == hits(team, onTeam, query), "\(query)")
        }
        let unordered: [[String]] = [
            ["the"], ["page"], ["the reader"], ["the", "--whole-word"], ["qu.ck|zebra", "--regex"],
            ["\\bth\\w+", "--regex"],
        ]
        for query in unordered {
            let sqlite = try hits(personal, [:], query)
            #expect(!sqlite.isEmpty, "\(query)")
            #expect(Set(sqlite) == Set(try hits(team, onTeam, query)), "\(query)")
        }
        // Pieces of the library's words (chosen by a hash, the same every run), one and two at a
        // time: the same hits on both; and on PostgreSQL the same hits in the same order from the
        // page words as from the text (`MARGIN_PLAIN=page-words,phrase-words`).
        let chosen = try TestCluster.psql(
            url,
            """
            SELECT substr(word, 1 + abs(hashtext(word)) % (length(word) - 2), 3 + abs(hashtext(word)) % 4)
                FROM margin.word WHERE length(word) >= 3 ORDER BY md5(word) LIMIT 24
            """
        ).split(separator: "\n").map(String.init)
        #expect(chosen.count == 24)
        // And phrases: pieces of the pages' text across words (found by their words, then
        // checked in the text), alone and beside a word.
        let phrases = try TestCluster.psql(
            url,
            """
            SELECT DISTINCT s FROM (SELECT substr(norm, (1 + (id * 37) % greatest(length(norm) - 14, 1))::int, (6 + id % 9)::int) AS s
                FROM margin.page) AS pieces WHERE s ~ '^[a-z0-9][a-z0-9 ,.-]*[a-z0-9]$' AND s ~ '[ ,.-]' ORDER BY s LIMIT 12
            """
        ).split(separator: "\n").map { "\"\($0)\"" }
        #expect(phrases.count >= 6, "\(phrases)")
        let queries =
            chosen.map { [$0] } + stride(from: 0, to: 12, by: 2).map { [chosen[$0] + " " + chosen[$0 + 1]] }
            + phrases.map { [$0] } + phrases.prefix(4).enumerated().map { [$1 + " " + chosen[$0]] }
        let textSearch = onTeam.merging(["MARGIN_PLAIN": "page-words,phrase-words"]) { $1 }
        // Phrases by a word of each group, not by their words' pairs; a tier of words found apart
        // from the other pages holding the terms, which are counted apart.
        let groupSearch = onTeam.merging(["MARGIN_PLAIN": "phrase-pairs,flagged-tiers"]) { $1 }
        // And with each read's BEGIN and COMMIT waited for, no reads sent ahead, a tier's pages
        // counted before they are ranked, a ranked tier's first pages read apart, and prepared
        // statements planned for each run's arguments (the switches of those fast paths).
        let awaited = onTeam.merging([
            "MARGIN_PLAIN": "read-round-trips,send-ahead,count-as-ranks,first-pages,generic-plans"
        ]) { $1 }
        for query in queries + ranked + unordered {
            let fromWords = try hits(team, onTeam, query + ["--limit", "0"])
            // The text finds the same pages, ranked by each term as a whole (not by each word
            // holding it, as the page words and SQLite's index rank).
            #expect(Set(fromWords) == Set(try hits(team, textSearch, query + ["--limit", "0"])), "\(query)")
            #expect(fromWords == (try hits(team, awaited, query + ["--limit", "0"])), "\(query)")
            if query.contains(where: { $0.contains(" ") }) {
                #expect(fromWords == (try hits(team, groupSearch, query + ["--limit", "0"])), "\(query)")
            }
            if !query.contains("--regex") {
                let sqlite = try hits(personal, [:], query + ["--limit", "0"])
                // A phrase beginning or ending inside a word is, to FTS5, a choice of phrases of
                // whole words ("cond pa": "second page" or "second paragraph"), each weighed
                // apart; PostgreSQL ranks it as one phrase: the same pages, maybe another order.
                if unordered.contains(query) || phrases.contains(where: { query[0].contains($0) }) {
                    #expect(Set(fromWords) == Set(sqlite), "\(query)")
                } else {
                    #expect(fromWords == sqlite, "\(query)")
                }
            }
        }
        // How many pages past the first the words' pieces are on (each page holding a piece of
        // every term, not of any one): the note's count, the same on both.
        func more(_ box: Sandbox, _ environment: [String: String], _ query: [String]) throws -> String {
            let result = try box.margin.run(["search", "--limit", "1"] + query, environment: environment)
            #expect(result.status == 0, "\(query): \(result)")
            return result.stderrLines.filter { $0.contains("more") }.joined(separator: "\n")
        }
        var counted = 0
        let pairs = stride(from: 0, to: 12, by: 2).map { [chosen[$0] + " " + chosen[$0 + 1]] }
        // ("reader page": 3 pages hold "reader" as a word, 8 a word holding it; a tier of the
        // words as words counted with all the pages holding them.)
        for query in pairs + [["the fox"], ["quick brown"], ["reader page"], ["page document"]] {
            let sqlite = try more(personal, [:], query)
            let postgres = try more(team, onTeam, query)
            #expect(sqlite == postgres, "\(query): \(sqlite) | \(postgres)")
            #expect(try more(team, groupSearch, query) == postgres, "\(query)")
            if !sqlite.isEmpty { counted += 1 }
        }
        #expect(counted >= 2, "queries of more than one hit")
        // Without stems (books in a language Snowball has none for), the count past the limit is
        // the words tier's statement's own count of every page holding the terms.
        for book in 1...Self.files.count {
            try personal.ok("edit", "\(book)", "--lang", "ja", "-q")
            #expect(try team.margin.run(["edit", "\(book)", "--lang", "ja", "-q"], environment: onTeam).status == 0)
        }
        for query in [["reader page"], ["page document"]] {
            let sqlite = try more(personal, [:], query)
            #expect(sqlite.contains(" more page"), "\(query): \(sqlite)")
            #expect(try more(team, onTeam, query) == sqlite, "\(query)")
            #expect(try more(team, groupSearch, query) == sqlite, "\(query)")
        }
    }
}

/// Every shipped PostgreSQL schema (fixtures/db/postgres-vN.sql, made by that version's margin)
/// upgrades to today's with nothing lost: counts, annotations (now the upgrading role's), the
/// books' openings (now that role's), search and the PDFs in the database.
@Suite struct TeamLibraryUpgradeTests {
    static let dumps: [String] = {
        let folder = Fixtures.root + "/fixtures/db"
        return ((try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? [])
            .filter { $0.hasPrefix("postgres-v") && $0.hasSuffix(".sql") }.sorted().map { folder + "/" + $0 }
    }()

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"),
        arguments: dumps)
    func aShippedSchemaUpgradesWithNothingLost(_ dump: String) throws {
        let url = try TestCluster.freshDatabase()
        let restore = try runProcess("/usr/bin/psql", [url, "-q", "-X", "-v", "ON_ERROR_STOP=1", "-f", dump])
        #expect(restore.status == 0, "\(restore.stderr)")
        let expected = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: dump + ".json")))
                as? [String: Int])
        let box = Sandbox()
        let team = ["MARGIN_LIBRARY": url]
        func json(_ arguments: String...) throws -> Any {
            let result = try box.margin.run(arguments + ["--json"], environment: team)
            #expect(result.status == 0, "\(arguments): \(result)")
            return try result.json()
        }
        let status = try #require(try json("db", "status") as? [String: Any])
        let schema = try #require(status["schema"] as? [String: Any])
        #expect(
            (schema["pending"] as? [String])?.isEmpty == true && schema["version"] as? Int == schema["latest"] as? Int)
        let counts = try #require(status["counts"] as? [String: Int])
        #expect(counts.filter { expected[$0.key] != nil } == expected)
        #expect(counts["guides"] == expected["guides"] ?? 0, "guides came with v5")
        if (expected["guides"] ?? 0) > 0 {
            let meta = try #require(try json("meta", "margins that last") as? [String: Any])
            let paper = try #require(meta["book"] as? [String: Any])
            #expect(paper["citationKey"] as? String == "muller2023margins")
            #expect(paper["arxiv"] as? String == "2305.03393v2")
        }
        if let version = Int(URL(fileURLWithPath: dump).lastPathComponent.dropFirst(10).prefix { $0.isNumber }),
            version >= 7
        {
            let sample = try #require(try json("meta", "sample paper") as? [String: Any])
            #expect((sample["book"] as? [String: Any])?["workType"] as? String == "proceedings-article")
            if version >= 14 {
                // Chinese and Japanese pages are still found by pairs of their letters.
                let found = try #require(try json("search", "東京") as? [[String: Any]])
                #expect(found.map { $0["page"] as? Int } == [2, 3])
            }
        }
        let highlights = try #require(try json("highlight", "list") as? [[String: Any]])
        #expect(highlights.map { $0["note"] as? String } == ["kept across upgrades"])
        #expect(highlights.first?["author"] as? String == "postgres", "the upgrading role's now")
        #expect(try #require(try json("recent") as? [Any]).count == 2, "the openings are the upgrading role's")
        let hits = try #require(try json("search", "inverted index") as? [[String: Any]])
        #expect(hits.filter { $0["book"] as? Int == 1 }.map { $0["page"] as? Int } == [2])
        // From v16 a phrase's pages are found by the pairs of its words: every page's made.
        let phrase = try #require(try json("search", "\"inverted index\"") as? [[String: Any]])
        #expect(phrase.filter { $0["book"] as? Int == 1 }.map { $0["page"] as? Int } == [2])
        #expect(try TestCluster.psql(url, "SELECT count(*) FROM margin.page WHERE pairs IS NULL") == "0")
        // From v17 each page's length beside its words (ranking weighs with it), kept by its
        // trigger: its text changed, and its length alone.
        let stale =
            "SELECT count(*) FROM margin.page_word w JOIN margin.page p ON p.id = w.page WHERE w.length <> p.words"
        #expect(try TestCluster.psql(url, stale) == "0")
        #expect(try TestCluster.psql(url, "SELECT count(*) FROM margin.page_word WHERE length > 0") != "0")
        try TestCluster.psql(
            url, "UPDATE margin.page SET words = words + 7 WHERE id = (SELECT min(id) FROM margin.page)")
        try TestCluster.psql(
            url,
            "UPDATE margin.page SET text = text || ' upgraded', norm = norm || ' upgraded', words = words + 1 "
                + "WHERE id = (SELECT max(id) FROM margin.page)")
        #expect(try TestCluster.psql(url, stale) == "0")
        // From v18 the content's version, raised by each transaction writing the vocabulary (the
        // page's new word above), the books or their guides.
        let version = "SELECT count(*) || ' ' || max(version) FROM margin.content_version"
        let raised = try TestCluster.psql(url, version)
        try TestCluster.psql(url, "UPDATE margin.book SET title = title || ' ' WHERE id = 1")
        #expect(raised.hasPrefix("1 ") && (Int(raised.dropFirst(2)) ?? 0) > 0, "\(raised)")
        #expect(try TestCluster.psql(url, version) == "1 \((Int(raised.dropFirst(2)) ?? 0) + 1)")
        // From v9 a scanned book, its page read by OCR: found by its words.
        #expect(hits.count == (counts["recognizedPages"] ?? 0) + 1, "\(hits)")
        let rendered = box.folder.path + "/p1.png"
        #expect(try box.margin.run(["render", "1", "--page", "1", "-o", rendered], environment: team).status == 0)
        #expect(FileManager.default.fileExists(atPath: rendered), "the PDF came from the database")
    }

    /// A library of v13 holding Chinese and Japanese text and punctuation past ASCII against a
    /// word (a page written as v13 wrote it: kana folded without voicing marks, words split at
    /// ASCII's punctuation by its trigger) is indexed again by v14: found by pairs of its letters,
    /// が no longer finds か, "index" in "«index»" is a word of the page.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func v14IndexesChineseAndJapaneseAgain() throws {
        let url = try TestCluster.freshDatabase()
        let dump = Fixtures.root + "/fixtures/db/postgres-v13.sql"
        let restore = try runProcess("/usr/bin/psql", [url, "-q", "-X", "-v", "ON_ERROR_STOP=1", "-f", dump])
        #expect(restore.status == 0, "\(restore.stderr)")
        try TestCluster.psql(
            url,
            """
            INSERT INTO margin.page ("bookId", number, text, norm, words)
                SELECT min(id), 99, '東京タワーは東京にあります。がっこう «index»…', '東京タワーは東京にあります。かっこう «index»…', 3
                FROM margin.book
            """)
        #expect(try TestCluster.psql(url, "SELECT count(*) FROM margin.page_word WHERE word = '«index»…'") == "1")
        let box = Sandbox()
        let team = ["MARGIN_LIBRARY": url]
        func pages(_ query: String) throws -> [Int] {
            let result = try box.margin.run(["search", query, "--json"], environment: team)
            #expect(result.status == 0, "\(query): \(result)")
            return try #require(try result.json() as? [[String: Any]]).compactMap { $0["page"] as? Int }
        }
        #expect(try pages("東京") == [99])
        #expect(try pages("がっこう") == [99])
        #expect(try pages("かっこう").isEmpty)
        #expect(try TestCluster.psql(url, "SELECT count(*) FROM margin.page_word WHERE word = '«index»…'") == "0")
        #expect(
            try TestCluster.psql(
                url,
                "SELECT string_agg(word, ' ' ORDER BY word) FROM margin.page_word WHERE page = "
                    + "(SELECT id FROM margin.page WHERE number = 99) AND word IN ('index', '東京', 'がっ', 'かっ')")
                == "index がっ 東京")
        #expect(try TestCluster.psql(url, "SELECT words FROM margin.page WHERE number = 99") == "16")
    }

    /// A library of v14 holding kana with voicing marks written apart (a page and a memo folded
    /// as v14 folded them: the half-width mark dropped, カス) is folded again by v15: ガス finds
    /// the page, カス no longer does, and the memo's folded text is パン.
    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func v15ComposesVoicingMarksWrittenApart() throws {
        let url = try TestCluster.freshDatabase()
        let dump = Fixtures.root + "/fixtures/db/postgres-v14.sql"
        let restore = try runProcess("/usr/bin/psql", [url, "-q", "-X", "-v", "ON_ERROR_STOP=1", "-f", dump])
        #expect(restore.status == 0, "\(restore.stderr)")
        try TestCluster.psql(
            url,
            """
            INSERT INTO margin.page ("bookId", number, text, norm, words)
                SELECT min(id), 99, 'これはｶﾞｽです', 'これはカスです', 6 FROM margin.book;
            UPDATE margin.memo SET text = 'ﾊﾟﾝのメモ', norm = 'ハンのメモ' WHERE id = (SELECT min(id) FROM margin.memo)
            """)
        #expect(try TestCluster.psql(url, "SELECT count(*) FROM margin.page_word WHERE word = 'カス'") == "1")
        let box = Sandbox()
        let team = ["MARGIN_LIBRARY": url]
        func pages(_ query: String) throws -> [Int] {
            let result = try box.margin.run(["search", query, "--json"], environment: team)
            #expect(result.status == 0, "\(query): \(result)")
            return try #require(try result.json() as? [[String: Any]]).compactMap { $0["page"] as? Int }
        }
        #expect(try pages("ガス") == [99])
        #expect(try pages("カス").isEmpty)
        #expect(try TestCluster.psql(url, "SELECT count(*) FROM margin.page_word WHERE word = 'カス'") == "0")
        #expect(
            try TestCluster.psql(url, "SELECT norm FROM margin.memo WHERE id = (SELECT min(id) FROM margin.memo)")
                == folded("パンのメモ"))
    }
}

/// A team library on this machine's server through its Unix-domain socket (libpq's
/// `?host=/FOLDER`): the same library as over TCP, without TLS.
@Suite struct TeamSocketTests {
    @Test(
        Prerequisite.needs(
            TestCluster.socketURL != nil, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func theSocketReachesTheSameLibrary() throws {
        let url = try TestCluster.freshDatabase()
        let socket = try #require(TestCluster.overSocket(url))
        let tcp = Sandbox()
        let local = Sandbox()
        _ = try tcp.margin.run(["add", "-q", Fixtures.pdf("sample.pdf")], environment: ["MARGIN_LIBRARY": url])
        let listed = try local.margin.run(["list", "--json"], environment: ["MARGIN_LIBRARY": socket])
        #expect(listed.status == 0, "\(listed)")
        let books = try #require(try listed.json() as? [[String: Any]])
        #expect(books.map { $0["title"] as? String } == ["A Sample Paper"])
        let hits = try local.margin.run(["search", "inverted", "--json"], environment: ["MARGIN_LIBRARY": socket])
        #expect((try hits.json() as? [Any])?.count == 1, "\(hits)")
        // Written through the socket, read over TCP.
        _ = try local.margin.run(["memo", "add", "1", "through the socket"], environment: ["MARGIN_LIBRARY": socket])
        let memos = try tcp.margin.run(["memo", "list", "--json"], environment: ["MARGIN_LIBRARY": url])
        #expect(memos.stdout.contains("through the socket"), "\(memos)")
        let status = try local.margin.run(["db", "status"], environment: ["MARGIN_LIBRARY": socket])
        #expect(status.stdout.contains("(not encrypted)"), "\(status.stdout)")
        // A folder with no server's socket: one error line, nothing made.
        let nowhere = try #require(TestCluster.overSocket(url)).replacingOccurrences(
            of: "host=/", with: "host=/nonexistent/")
        let refused = try local.margin.run(["list"], environment: ["MARGIN_LIBRARY": nowhere])
        #expect(refused.status != 0 && refused.stderr.hasPrefix("error: "), "\(refused)")
        #expect(refused.stderr.contains("no PostgreSQL server's socket there"), "\(refused.stderr)")
        #expect(refused.stderr.split(separator: "\n").count == 1, "\(refused.stderr)")
    }
}

import Foundation
import TestSupport
import Testing

/// What each PDF is (issue: titles from the page, DOI and arXiv ids, outline and page labels,
/// citations), through the CLI on fixture papers made to look like real ones.
@Suite struct MetadataTests {
    /// `meta BOOK --json`'s book.
    static func book(_ box: Sandbox, _ selector: String) throws -> [String: Any] {
        let report = try #require(try box.ok("meta", selector, "--json").json() as? [String: Any])
        return try #require(report["book"] as? [String: Any])
    }

    @Test func addFindsTitleAuthorsIdentifiersAndYearOffline() throws {
        let box = Sandbox()
        for name in ["paper-arxiv.pdf", "paper-word.pdf", "paper-xmp.pdf", "outlined.pdf", "sample.pdf"] {
            try box.ok("add", "-q", Fixtures.pdf(name))
        }
        func fields(_ id: String) throws -> [String?] {
            let book = try Self.book(box, id)
            return [
                book.string("title"), book.string("author"), book.string("doi"), book.string("arxiv"),
                (book["year"] as? Int).map(String.init), book.string("venue"), book.string("citationKey"),
            ]
        }
        // The /Title is an arXiv id and there is no /Author: the first page's 17 pt title (two
        // lines, past a sideways arXiv stamp in larger type) and the names beneath it.
        #expect(
            try fields("1") == [
                "Margins That Last: Anchoring Reader Annotations Across PDF Versions",
                "José Müller, Ada Lovelace, Zoë Ng", "10.5555/margin.2023.0042", "2305.03393v2", "2023", nil,
                "muller2023margins",
            ])
        // "Microsoft Word - draft3.docx" and a login name: the page says better; a DOI link and
        // a copyright year in the footer.
        #expect(
            try fields("2") == [
                "A Study of Reading Habits in Graduate School", "Jane Smith, Bob O'Brien", "10.1000/xyz.123", nil,
                "2019", nil, "smith2019study",
            ])
        // XMP: title (an entity in it), creators, DOI, date, journal.
        #expect(
            try fields("3") == [
                "Marginal Notes & the Digital Age", "Ana Lima, Kai Chen", "10.5555/xmp.2021.7", nil, "2021",
                "Journal of Reading Tools", "lima2021marginal",
            ])
        // Good document information is kept as it is.
        #expect(try fields("5")[0...1] == ["A Sample Paper", "Ada Lovelace"])
        // The sideways stamp is text a search finds (not "a r X i v").
        let hits = try #require(try box.ok("search", "arXiv:2305.03393v2", "--json").json() as? [[String: Any]])
        #expect(hits.map { $0.int("page") } == [1])
    }

    @Test func typedValuesWinAndKeysStayOnceMade() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("paper-arxiv.pdf"), "--title", "My Own Title", "--author", "Me Myself")
        try box.ok("add", "-q", Fixtures.pdf("sample.pdf"))
        try box.ok("add", "-q", Fixtures.pdf("sample-v2.pdf"))
        #expect(try Self.book(box, "1").string("title") == "My Own Title")
        // Two books whose keys would be the same: the second gets a letter.
        #expect(try Self.book(box, "2").string("citationKey") == "lovelacesample")
        #expect(try Self.book(box, "3").string("citationKey") == "lovelacesamplea")
        // A refresh reads the PDF again but keeps what was typed, and says so.
        let refreshed = try #require(try box.ok("meta", "1", "--refresh", "--json").json() as? [String: Any])
        let changes = try #require(refreshed["changes"] as? [[String: Any]])
        let title = try #require(changes.first { $0.string("field") == "title" })
        #expect(title["applied"] as? Bool == false && title.string("reason")?.contains("typed by you") == true)
        #expect(try Self.book(box, "1").string("title") == "My Own Title")
        #expect(try Self.book(box, "1").string("doi") == "10.5555/margin.2023.0042")
        // `edit --title` is typed too: a refresh keeps off it, even when it looks like junk.
        try box.ok("edit", "1", "--title", "2305.03393")
        try box.ok("meta", "1", "--refresh")
        #expect(try Self.book(box, "1").string("title") == "2305.03393")
        // Editing the title doesn't change a key once made; --key sets one, unique.
        try box.ok("meta", "2", "--title", "Another Title")
        #expect(try Self.book(box, "2").string("citationKey") == "lovelacesample")
        let taken = try box.fails("meta", "2", "--key", "lovelacesamplea")
        #expect(taken.stderr.contains("is already the key of 'A Sample Paper, Revised'"), "\(taken)")
        try box.ok("meta", "2", "--key", "ada-1843")
        #expect(try Self.book(box, "2").string("citationKey") == "ada-1843")
        // Malformed input: a usage error, nothing changed.
        let before = try box.ok("meta", "2", "--json").stdout
        for bad in [["--doi", "10.12/x"], ["--doi", "doi:nonsense"], ["--arxiv", "2313.03393"], ["--year", "99"]] {
            let result = try box.margin.run(["meta", "2"] + bad)
            #expect(result.status == 64 && result.stderr.hasPrefix("error: "), "\(bad): \(result)")
        }
        #expect(try box.ok("meta", "2", "--json").stdout == before)
    }

    @Test func annotationsSearchHitsAndExportsKnowPageLabelsAndChapters() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("paper-arxiv.pdf"))
        try box.ok("add", "-q", Fixtures.pdf("outlined.pdf"))
        try box.ok("highlight", "add", "-q", "1", "--page", "2", "--text", "Earlier tools anchored notes")
        try box.ok("memo", "add", "-q", "1", "--page", "3", "On the method")
        try box.ok("bookmark", "add", "-q", "1", "1")
        try box.ok("memo", "add", "-q", "1", "On the whole paper")
        let items = try #require(try box.ok("annotations", "1", "--json").json() as? [[String: Any]])
        #expect(items.map { $0.string("pageLabel") } == ["101", "102", "103", nil])
        #expect(items.map { $0.string("chapter") } == ["Abstract", "1.1 Background", "2 Method", nil])
        let highlight = try #require(try box.ok("highlight", "list", "1", "--json").json() as? [[String: Any]])
        #expect(highlight.first?.string("pageLabel") == "102" && highlight.first?.string("chapter") == "1.1 Background")
        // Roman front matter and an appendix in the other book.
        try box.ok("bookmark", "add", "-q", "2", "2")
        try box.ok("bookmark", "add", "-q", "2", "6")
        let marks = try #require(try box.ok("bookmark", "list", "2", "--json").json() as? [[String: Any]])
        #expect(marks.map { $0.string("pageLabel") } == ["ii", "A-1"])
        #expect(marks.map { $0.string("chapter") } == ["Preface", "Appendix"])
        // Search hits carry the printed page number; a book without labels says null.
        let hits = try #require(try box.ok("search", "anchored", "--json").json() as? [[String: Any]])
        #expect(Set(hits.compactMap { $0.string("pageLabel") }) == ["101", "102", "103"])
        try box.ok("add", "-q", Fixtures.pdf("sample.pdf"))
        let plain = try #require(try box.ok("search", "fox", "--json").json() as? [[String: Any]])
        #expect(!plain.isEmpty && plain.allSatisfy { $0.keys.contains("pageLabel") && $0["pageLabel"] is NSNull })
        // Markdown: pages under their chapters, printed numbers beside margin's.
        let markdown = try box.ok("export", "1", "--format", "markdown").stdout
        for line in [
            "## Abstract", "### Page 1 (p. 101)", "## 1.1 Background", "### Page 2 (p. 102)", "> — p. 102",
            "## 2 Method", "### Page 3 (p. 103)", "- **DOI:** [10.5555/margin.2023.0042]",
            "- **Cite as:** `muller2023margins`",
        ] {
            #expect(markdown.contains(line + "\n") || markdown.contains(line), "\(line) in\n\(markdown)")
        }
        let order = ["## Abstract", "## 1.1 Background", "## 2 Method"].compactMap {
            markdown.range(of: $0)?.lowerBound
        }
        #expect(order.count == 3 && order == order.sorted())
        // CSV and the JSON backup carry them too.
        let csv = try box.ok("export", "1", "--format", "csv").stdout
        #expect(
            csv.hasPrefix(
                "book_sha256,book_title,kind,uuid,page,text,note,color,label,author,created_at,updated_at,page_label,chapter\r\n"
            ))
        #expect(csv.contains(",102,1.1 Background\r\n"))
        let backup = try #require(try box.ok("export", "1", "--format", "json").json() as? [String: Any])
        let entry = try #require((backup["books"] as? [[String: Any]])?.first)
        #expect((entry["highlights"] as? [[String: Any]])?.first?.string("chapter") == "1.1 Background")
        #expect(entry.string("citationKey") == "muller2023margins" && entry.string("arxiv") == "2305.03393v2")
        // show says there is an outline and printed page numbers.
        let show = try box.ok("show", "2").stdout
        #expect(show.contains("outline   6 entries") && show.contains("pages numbered i … A-1"), "\(show)")
    }

    @Test func aLibraryFromBeforeMetadataGetsItWithMetaRefresh() throws {
        let box = Sandbox()
        try FileManager.default.createDirectory(atPath: box.home, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.root + "/fixtures/db/v7.sqlite", toPath: box.home + "/library.sqlite")
        // The v7 library's PDFs: put in the cache by adding them again (same bytes, same books).
        try box.ok(
            "add", "-q", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf"), Fixtures.pdf("untitled-notes.pdf"))
        let before = try #require(try box.ok("db", "status", "--json").json() as? [String: Any])
        #expect((before["counts"] as? [String: Int])?["guides"] == 0)
        try box.ok("meta", "--all", "--refresh")
        let after = try #require(try box.ok("db", "status", "--json").json() as? [String: Any])
        #expect((after["counts"] as? [String: Int])?["guides"] == 3)
        #expect(try Self.book(box, "sample paper").string("citationKey") == "lovelacesample")
        // The annotations the old library had are all there.
        #expect((after["counts"] as? [String: Int])?["highlights"] == 1)
    }
}

/// References: BibTeX, CSL-JSON and RIS, each read back by a program that isn't margin.
@Suite struct CitationTests {
    static let python = FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
    static func hasModule(_ name: String) -> Bool {
        python && (try? runProcess("/usr/bin/env", ["python3", "-c", "import " + name]).status) == 0
    }
    static let pandoc = FileManager.default.isExecutableFile(atPath: "/usr/bin/pandoc")

    static func library() throws -> Sandbox {
        let box = Sandbox()
        for name in ["paper-arxiv.pdf", "paper-word.pdf", "paper-xmp.pdf", "outlined.pdf"] {
            try box.ok("add", "-q", Fixtures.pdf(name))
        }
        // TeX's specials in a title and a name with particles and a suffix.
        try box.ok(
            "meta", "4", "--title", "50% of $x_1$ & {braces} #1 ~ ^", "--author",
            "Ludwig van Beethoven Jr., Ødegård, Ærø")
        return box
    }

    @Test(
        Prerequisite.needs(
            hasModule("bibtexparser") && hasModule("pybtex"), "needs bibtexparser and pybtex (make test installs them)")
    )
    func bibtexReadsBackWithBibtexparserAndPybtex() throws {
        let box = try Self.library()
        let bib = try box.ok("cite", "--all").stdout
        #expect(bib == (try box.ok("export", "--all", "--format", "bibtex").stdout), "cite and export agree")
        let script = """
            import sys, json
            import bibtexparser
            from bibtexparser.bparser import BibTexParser
            from bibtexparser.customization import convert_to_unicode
            from pybtex.database import parse_string
            text = sys.stdin.read()
            parser = BibTexParser(common_strings=True)
            parser.customization = convert_to_unicode
            db = bibtexparser.loads(text, parser=parser)
            entries = {e['ID']: {k: v for k, v in e.items()} for e in db.entries}
            people = {}
            for key, entry in parse_string(text, 'bibtex').entries.items():
                people[key] = [[' '.join(p.first_names + p.middle_names), ' '.join(p.prelast_names + p.last_names),
                                ' '.join(p.lineage_names)] for p in entry.persons.get('author', [])]
            print(json.dumps({'entries': entries, 'people': people}))
            """
        let result = try runProcess("/usr/bin/env", ["python3", "-c", script], stdin: bib)
        #expect(result.status == 0, "\(result)")
        let parsed = try #require(try result.json() as? [String: Any])
        let entries = try #require(parsed["entries"] as? [String: [String: String]])
        #expect(Set(entries.keys) == ["muller2023margins", "smith2019study", "lima2021marginal", "authoroutlined"])
        let paper = try #require(entries["muller2023margins"])
        #expect(paper["author"] == "Müller, José and Lovelace, Ada and Ng, Zoë", "\(paper)")
        #expect(paper["title"] == "Margins That Last: Anchoring Reader Annotations Across PDF Versions")
        #expect(paper["year"] == "2023" && paper["doi"] == "10.5555/margin.2023.0042")
        #expect(paper["eprint"] == "2305.03393" && paper["ENTRYTYPE"] == "misc")
        #expect(entries["lima2021marginal"]?["ENTRYTYPE"] == "article")
        #expect(entries["lima2021marginal"]?["journal"] == "Journal of Reading Tools")
        let people = try #require(parsed["people"] as? [String: [[String]]])
        #expect(people["muller2023margins"]?.map { $0[1] } == ["M{\\\"u}ller", "Lovelace", "Ng"])
        #expect(
            people["authoroutlined"] == [
                ["Ludwig", "van Beethoven", "Jr."], ["", "{\\O}deg{\\aa}rd", ""], ["", "{\\AE}r{\\o}", ""],
            ])
        // The special characters are escaped, and read back as what they were.
        let odd = try #require(entries["authoroutlined"])
        #expect(odd["title"]?.contains("\\%") == false, "\(odd)")
        #expect(
            bib.contains(
                "title = {{50\\% of \\$x\\_1\\$ \\& \\{braces\\} \\#1 {\\textasciitilde} {\\textasciicircum}}}"),
            "\(bib)")
    }

    @Test(Prerequisite.needs(pandoc, "needs pandoc (make test installs it)"))
    func pandocReadsTheBibTeXAndTheCSLJSON() throws {
        let box = try Self.library()
        let folder = box.folder.path
        try box.ok("cite", "--all", "--format", "csl-json").stdout.write(
            toFile: folder + "/refs.json", atomically: true, encoding: .utf8)
        try box.ok("cite", "--all").stdout.write(toFile: folder + "/refs.bib", atomically: true, encoding: .utf8)
        // pandoc's citeproc reads both and writes CSL-JSON: the same works either way.
        var read = [String: [[String: Any]]]()
        for (file, format) in [("refs.json", "csljson"), ("refs.bib", "bibtex")] {
            let result = try runProcess("/usr/bin/pandoc", ["-f", format, "-t", "csljson", folder + "/" + file])
            #expect(result.status == 0, "\(file): \(result)")
            read[format] = try #require(try result.json() as? [[String: Any]])
        }
        for format in ["csljson", "bibtex"] {
            let items = try #require(read[format])
            let paper = try #require(items.first { $0.string("id") == "muller2023margins" }, "\(format): \(items)")
            #expect(
                paper.string("title") == "Margins That Last: Anchoring Reader Annotations Across PDF Versions",
                "\(format)")
            let authors = (paper["author"] as? [[String: Any]])?.map { [$0.string("given"), $0.string("family")] }
            #expect(authors == [["José", "Müller"], ["Ada", "Lovelace"], ["Zoë", "Ng"]], "\(format): \(paper)")
            let issued = (paper["issued"] as? [String: Any])?["date-parts"] as? [[Int]]
            #expect(issued == [[2023]], "\(format)")
            #expect(paper.string("DOI") == "10.5555/margin.2023.0042", "\(format)")
            let odd = try #require(items.first { $0.string("id") == "authoroutlined" })
            #expect(odd.string("title") == "50% of $x_1$ & {braces} #1 ~ ^", "\(format): \(odd)")
        }
        let journal = try #require(read["csljson"]?.first { $0.string("id") == "lima2021marginal" })
        #expect(
            journal.string("type") == "article-journal"
                && journal.string("container-title") == "Journal of Reading Tools")
    }

    @Test(Prerequisite.needs(hasModule("rispy"), "needs rispy (make test installs it)"))
    func risReadsBackWithRispy() throws {
        let box = try Self.library()
        let ris = try box.ok("cite", "--all", "--format", "ris").stdout
        let script = """
            import sys, json, rispy
            print(json.dumps(rispy.loads(sys.stdin.read()), default=str))
            """
        let result = try runProcess("/usr/bin/env", ["python3", "-c", script], stdin: ris)
        #expect(result.status == 0, "\(result)")
        let entries = try #require(try result.json() as? [[String: Any]])
        #expect(entries.count == 4)
        let paper = try #require(entries.first { $0.string("id") == "muller2023margins" })
        #expect(paper["authors"] as? [String] == ["Müller, José", "Lovelace, Ada", "Ng, Zoë"])
        #expect(paper.string("type_of_reference") == "UNPB" && paper.string("year") == "2023")
        #expect(paper.string("doi") == "10.5555/margin.2023.0042")
        #expect(entries.first { $0.string("id") == "lima2021marginal" }?.string("type_of_reference") == "JOUR")
    }

    @Test func citingAnUnknownBookChangesNothing() throws {
        let box = try Self.library()
        let before = try box.snapshot()
        try box.fails("cite", "1", "no such book")
        try box.fails("cite", "1", "--format", "endnote")
        #expect(try box.snapshot() == before)
    }
}

/// `--lookup`: Crossref and arXiv, played by a server on 127.0.0.1 answering in their formats.
@Suite struct LookupTests {
    static let crossref =
        (try? Data(contentsOf: URL(fileURLWithPath: Fixtures.root + "/fixtures/lookup/crossref-work.json")))
        .map { Array($0) } ?? []
    static let arxiv =
        (try? Data(contentsOf: URL(fileURLWithPath: Fixtures.root + "/fixtures/lookup/arxiv-entry.xml")))
        .map { Array($0) } ?? []
    static let arxivError =
        (try? Data(contentsOf: URL(fileURLWithPath: Fixtures.root + "/fixtures/lookup/arxiv-error.xml")))
        .map { Array($0) } ?? []

    static func services(_ routes: [String: Route] = [:]) throws -> (TestHTTPServer, [String: String]) {
        var all: [String: Route] = [
            "/works/10.5555/margin.2023.0042": .bytes(crossref, contentType: "application/json"),
            "/api/query": .handler { request in
                request.uri.contains("id_list=2305.03393")
                    ? Reply(headers: [("Content-Type", "application/atom+xml")], body: arxiv)
                    : Reply(headers: [("Content-Type", "application/atom+xml")], body: arxivError)
            },
        ]
        for (path, route) in routes { all[path] = route }
        let server = try TestHTTPServer(routes: all)
        let environment = [
            "MARGIN_CROSSREF_URL": server.baseURL, "MARGIN_ARXIV_URL": server.url("/api"),
            "MARGIN_CONTACT": "reader@example.org", "MARGIN_LOOKUP_TIMEOUT": "2",
        ]
        return (server, environment)
    }

    @Test func crossrefFillsWhatTheDOISaysAfterADryRunShowsIt() throws {
        let (server, environment) = try Self.services()
        defer { server.shutdown() }
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("paper-arxiv.pdf"))
        try box.ok("meta", "1", "--venue", "My Notes")
        let before = try box.ok("meta", "1", "--json").stdout
        let dry = try box.margin.run(["meta", "1", "--lookup", "--dry-run", "--json"], environment: environment)
        #expect(dry.status == 0, "\(dry)")
        let report = try #require(try dry.json() as? [String: Any])
        let changes = try #require(report["changes"] as? [[String: Any]])
        let byField = Dictionary(changes.map { ($0.string("field") ?? "", $0) }, uniquingKeysWith: { a, _ in a })
        #expect(byField["title"]?.string("to") == "Margins that Last: Anchoring Reader Annotations across PDF Versions")
        #expect(byField["title"]?.string("source") == "crossref")
        #expect(byField["publisher"]?.string("to") == "Example Press")
        #expect(byField["venue"]?.string("to") == "Journal of Marginal Studies")
        #expect(byField["venue"]?["applied"] as? Bool == false)
        #expect(byField["venue"]?.string("reason")?.contains("typed by you") == true)
        #expect(try box.ok("meta", "1", "--json").stdout == before, "a dry run changes nothing")
        // The request was a polite one.
        let request = try #require(server.requests("/works/10.5555/margin.2023.0042").first)
        #expect(request.header("user-agent")?.hasPrefix("margin/") == true)
        #expect(request.header("user-agent")?.contains("mailto:reader@example.org") == true)
        // Now for real: the venue typed stays; with --overwrite it goes.
        try box.margin.run(["meta", "1", "--lookup"], environment: environment)
        var book = try MetadataTests.book(box, "1")
        #expect(book.string("title") == "Margins that Last: Anchoring Reader Annotations across PDF Versions")
        #expect(book.string("venue") == "My Notes" && book.string("publisher") == "Example Press")
        #expect(book.int("year") == 2023 && book.string("citationKey") == "muller2023margins")
        try box.margin.run(["meta", "1", "--lookup", "--overwrite"], environment: environment)
        book = try MetadataTests.book(box, "1")
        #expect(book.string("venue") == "Journal of Marginal Studies")
    }

    @Test func arxivFillsWhatTheIdSaysAndAddLooksUpBeforeSaving() throws {
        let (server, environment) = try Self.services()
        defer { server.shutdown() }
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("untitled-notes.pdf"))
        let looked = try box.margin.run(
            ["meta", "1", "--arxiv", "arXiv:2305.03393", "--lookup"], environment: environment)
        #expect(looked.status == 0, "\(looked)")
        let book = try MetadataTests.book(box, "1")
        #expect(
            book.string("title")
                == "Margins That Last: Anchoring Reader Annotations Across PDF Versions & Their Readers")
        #expect(book.string("author") == "José Müller, Ada Lovelace, Zoë Ng")
        #expect(book.int("year") == 2023 && book.string("doi") == "10.5555/margin.2023.0042")
        // The id typed stays as typed (arXiv's versioned one doesn't replace it).
        #expect(book.string("arxiv") == "2305.03393" && book.string("venue") == "J. Marg. Stud. 12 (2023) 101-103")
        #expect(server.requests("/api/query").first?.uri.contains("id_list=2305.03393") == true)
        // add --lookup: the record is what is saved.
        let added = try box.margin.run(
            ["add", "-q", Fixtures.pdf("paper-arxiv.pdf"), "--lookup"], environment: environment)
        #expect(added.status == 0, "\(added)")
        #expect(
            try MetadataTests.book(box, "2").string("title")
                == "Margins that Last: Anchoring Reader Annotations across PDF Versions")
    }

    @Test func aLookupThatFailsSaysSoAndChangesNothing() throws {
        let dripping = Reply(
            headers: [("Content-Type", "application/json")], body: Self.crossref, drip: (bytes: 8, delay: 1.5))
        let (server, environment) = try Self.services([
            "/works/10.1000/xyz.123": .status(404),
            "/works/10.5555/xmp.2021.7": .bytes(
                Array("<!DOCTYPE html><html><body>Sign in</body></html>".utf8), contentType: "text/html"),
            "/works/10.5555/margin.2023.0042": .bytes(
                Array("{\"status\":\"ok\",\"message\":".utf8), contentType: "application/json"),
            "/works/10.5555/slow.1": .handler { _ in dripping },
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        for name in ["paper-word.pdf", "paper-xmp.pdf", "paper-arxiv.pdf", "sample.pdf"] {
            try box.ok("add", "-q", Fixtures.pdf(name))
        }
        try box.ok("meta", "4", "--doi", "10.5555/slow.1")
        // Everything a user could see of the library (the backup's own date aside).
        func state() throws -> String {
            try box.snapshot()
                + (try box.ok("export", "--all", "--format", "json").stdout).split(separator: "\n").filter {
                    !$0.contains("\"exportedAt\"")
                }.joined(separator: "\n")
        }
        let before = try state()
        for (book, words) in [
            ("1", "Crossref lookup failed: it has no record of DOI 10.1000/xyz.123 (404)"),
            ("2", "it answered with a web page, not JSON"), ("3", "is not the JSON it sends"),
            ("4", "Crossref lookup failed: no answer from"),
        ] {
            let result = try box.margin.run(["meta", book, "--lookup"], environment: environment)
            #expect(
                result.status == 1 && result.stderr.hasPrefix("error: ") && result.stderr.contains(words),
                "\(book): \(result)")
            #expect(result.stderr.components(separatedBy: "error: ").count == 2, "one error line: \(result)")
        }
        // arXiv: an id it rejects, and a server that isn't there.
        let rejected = try box.margin.run(["meta", "1", "--arxiv", "9912.99999", "--lookup"], environment: environment)
        #expect(
            rejected.status == 1 && rejected.stderr.contains("arXiv lookup failed: it has no paper 9912.99999"),
            "\(rejected)")
        let gone = try TestHTTPServer(routes: [:])
        let closed = gone.baseURL
        gone.shutdown()
        let offline = try box.margin.run(
            ["meta", "1", "--lookup"], environment: environment.merging(["MARGIN_CROSSREF_URL": closed]) { $1 })
        #expect(offline.status == 1 && offline.stderr.hasPrefix("error: "), "\(offline)")
        #expect(try state() == before)
        // add --lookup that fails adds nothing.
        let other = Sandbox()
        let notAdded = try other.margin.run(
            ["add", Fixtures.pdf("paper-word.pdf"), "--lookup"], environment: environment)
        #expect(notAdded.status == 1 && notAdded.stderr.contains("(404)"), "\(notAdded)")
        #expect(try other.books().isEmpty)
    }
}

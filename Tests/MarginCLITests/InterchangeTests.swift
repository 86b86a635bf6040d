import Foundation
import TestSupport
import Testing

/// Annotations out in the formats other tools read, and back: W3C Web Annotations, XFDF,
/// KOReader sidecars; Obsidian notes and Readwise's CSV out.
@Suite struct InterchangeTests {
    /// The PDFs: a passage over lines with words hyphenated at line ends, accents, Japanese.
    static var pdfs: [String] {
        [
            Fixtures.pdf("prose.pdf"), Fixtures.pdf("mixed.pdf"),
            (Fixtures.corpus ?? "") + "/real/camelot__twotables.pdf",
        ]
    }
    static let needsCorpus = Prerequisite.needs(Fixtures.corpus != nil, "../shared/corpus is absent")

    /// A library with highlights across lines, over hyphenated words, accented and Japanese,
    /// notes, colours, a bookmark and memos on a page and on a book.
    static func annotated(_ run: ([String]) throws -> RunResult) throws {
        _ = try run(["add", "-q"] + pdfs)
        _ = try run([
            "highlight", "add", "1", "--text", "the paying customers got shafted every now and then",
            "--note", "across lines\nwith a second line", "--color", "green",
        ])
        _ = try run(["highlight", "add", "1", "--text", "applicative-order evaluation"])
        _ = try run(["highlight", "add", "1", "--text", "computer is a machine", "--color", "#123456"])
        _ = try run(["highlight", "add", "2", "--text", "crème brûlée", "--note", "café"])
        _ = try run(["highlight", "add", "3", "--text", "株式会社極洋", "--note", "日本語のメモ"])
        _ = try run(["bookmark", "add", "1", "2", "--label", "second page"])
        _ = try run(["memo", "add", "1", "--page", "1", "a page memo\ntwo lines"])
        _ = try run(["memo", "add", "2", "a memo on the whole book"])
        // Taken in from another tool, with who wrote them there.
        let sha = try #require((try run(["show", "2", "--json"]).json() as? [String: Any])?["sha256"] as? String)
        let file = NSTemporaryDirectory() + "margin-w3c-\(UUID().uuidString).json"
        defer { try? FileManager.default.removeItem(atPath: file) }
        try """
        [{"type": "Annotation", "creator": {"type": "Person", "name": "Jane Reader"}, "created": "2024-01-02T03:04:05Z",
          "body": {"type": "TextualBody", "value": "from the web"},
          "target": {"source": "urn:sha256:\(sha)", "selector": [{"type": "TextQuoteSelector", "exact": "inverted index of the words"},
                     {"type": "FragmentSelector", "value": "page=1"}]}},
         {"type": "Annotation", "creator": "Ōe Kenzaburō", "created": "2024-01-02T03:04:06Z", "motivation": "commenting",
          "body": "a memo by someone else", "target": "urn:sha256:\(sha)#page=1"}]
        """.write(toFile: file, atomically: true, encoding: .utf8)
        _ = try run(["import", "web-annotations", file])
    }

    /// What must come back: highlights (book, page, text, note, colour, author, rects to the
    /// point), memos and bookmarks, each by book and page.
    static func annotations(_ run: ([String]) throws -> RunResult) throws -> (
        highlights: [String], memos: [String], bookmarks: [String]
    ) {
        func list(_ kind: String) throws -> [[String: Any]] {
            try #require(try run([kind, "list", "--json"]).json() as? [[String: Any]])
        }
        let highlights = try list("highlight").map { h -> String in
            let rects = (h["rects"] as? [[Double]] ?? []).map { $0.map { String(Int($0.rounded())) } }
            return
                "\(h["book"]!) p\(h["page"]!) \(h["text"]!) | \(h["note"] ?? "-") | \(h["color"]!) | \(h["author"] ?? "-") | \(rects)"
        }.sorted()
        let memos = try list("memo").map {
            "\($0["book"]!) p\(($0["page"] as? Int).map(String.init) ?? "-") \($0["text"]!) | \($0["author"] ?? "-")"
        }.sorted()
        let bookmarks = try list("bookmark").map { "\($0["book"]!) p\($0["page"]!) \($0["label"] ?? "-")" }.sorted()
        return (highlights, memos, bookmarks)
    }

    @Test(needsCorpus, arguments: ["web-annotation", "xfdf", "koreader"])
    func annotationsGoOutAndComeBackTheSame(format: String) throws {
        let source = Sandbox()
        try Self.annotated { try source.ok($0) }
        let before = try Self.annotations { try source.ok($0) }
        let out = TemporaryFolder()
        let path = out.path + "/export" + (format == "web-annotation" ? ".json" : "")
        try source.ok("export", "--all", "--format", format, "-o", path)

        let fresh = Sandbox()
        try fresh.ok(["add", "-q"] + Self.pdfs)
        func bringIn(_ box: Sandbox, _ extra: [String] = []) throws -> [RunResult] {
            try Self.bringIn(format, from: path, extra) { try box.ok($0) }
        }
        // A dry run says what the import then does, and does nothing.
        let dry = try bringIn(fresh, ["--dry-run"])
        let nothing = try Self.annotations { try fresh.ok($0) }
        #expect(nothing.highlights.isEmpty && nothing.memos.isEmpty && nothing.bookmarks.isEmpty)
        let real = try bringIn(fresh)
        for (planned, done) in zip(dry, real) {
            var said = try #require(try planned.json() as? [String: Any])
            let did = try #require(try done.json() as? [String: Any])
            #expect(said.removeValue(forKey: "dryRun") as? Bool == true)
            for key in ["added", "updated", "unchanged", "conflicts", "highlights", "memos", "bookmarks"] {
                #expect(
                    (said[key] as? NSObject)?.isEqual(did[key]) == true, "\(format) \(key): \(planned) \(done)")
            }
        }
        let after = try Self.annotations { try fresh.ok($0) }
        #expect(after.highlights == before.highlights)
        switch format {
        case "xfdf":
            // XFDF holds annotations; a bookmark is not one.
            #expect(after.memos == before.memos)
            #expect(after.bookmarks.isEmpty)
        case "koreader":
            // KOReader keeps notes on pages; a memo on the whole book has no place there.
            #expect(after.memos == before.memos.filter { !$0.contains("p- ") })
            #expect(after.bookmarks == before.bookmarks)
        default:
            #expect(after.memos == before.memos)
            #expect(after.bookmarks == before.bookmarks)
        }
        // Again, into that library and into the first: nothing added, nothing changed.
        for box in [fresh, source] {
            for result in try bringIn(box) {
                let report = try #require(try result.json() as? [String: Any])
                #expect(report["added"] as? Int == 0 && report["updated"] as? Int == 0, "\(format): \(result.stdout)")
                #expect(report["conflicts"] as? Int == 0, "\(format): \(result.stdout)")
            }
        }
        #expect(try Self.annotations { try source.ok($0) }.highlights == before.highlights)
    }

    /// Takes in what `export --all --format F -o path` wrote: one command, or one per book for XFDF.
    static func bringIn(_ format: String, from path: String, _ extra: [String], run: ([String]) throws -> RunResult)
        throws -> [RunResult]
    {
        switch format {
        case "web-annotation": return [try run(["import", "web-annotations", path, "--json"] + extra)]
        case "koreader": return [try run(["import", "koreader", path, "--json"] + extra)]
        default:
            let files = try FileManager.default.contentsOfDirectory(atPath: path).sorted()
            #expect(files.count == 3, "\(files)")
            let names = ["Prose.xfdf", "Mixed Bag.xfdf", files.first { $0.hasPrefix("（") } ?? "?"]
            return try names.enumerated().map { index, name in
                try run(["import", "xfdf", path + "/" + name, "--book", "\(index + 1)", "--json"] + extra)
            }
        }
    }

    /// The W3C export holds to the data model's MUST rules (the assertions of the W3C test
    /// suite's annotationMusts, checked here in our own words).
    @Test(needsCorpus) func theWebAnnotationExportKeepsTheModelsRules() throws {
        let box = Sandbox()
        try Self.annotated { try box.ok($0) }
        let document = try #require(
            try box.ok("export", "--all", "--format", "web-annotation").json() as? [String: Any])
        #expect(document["@context"] as? String == "http://www.w3.org/ns/anno.jsonld")
        #expect(document["type"] as? String == "AnnotationCollection")
        #expect((document["id"] as? String)?.hasPrefix("urn:uuid:") == true)
        let page = try #require(document["first"] as? [String: Any])
        #expect(page["type"] as? String == "AnnotationPage")
        let items = try #require(page["items"] as? [[String: Any]])
        #expect(items.count == 10 && document["total"] as? Int == 10)
        let motivations: Set<String> = [
            "assessing", "bookmarking", "classifying", "commenting", "describing", "editing", "highlighting",
            "identifying", "linking", "moderating", "questioning", "replying", "tagging",
        ]
        func isIRI(_ value: Any?) -> Bool {
            guard let text = value as? String, let colon = text.firstIndex(of: ":") else { return false }
            return !text.contains(" ") && text[..<colon].allSatisfy { $0.isLetter || $0.isNumber || "+-.".contains($0) }
        }
        func isDateTime(_ value: Any?) -> Bool {
            (value as? String).map {
                $0.range(of: #"^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d(\.\d+)?(Z|[+-]\d\d:\d\d)$"#, options: .regularExpression)
                    != nil
            } ?? false
        }
        var highlights = 0
        for item in items {
            let id = item["id"] as? String ?? "?"
            #expect(isIRI(item["id"]), "\(id): an id that is an IRI")
            #expect(item["type"] as? String == "Annotation", "\(id)")
            #expect(motivations.contains(item["motivation"] as? String ?? ""), "\(id)")
            #expect(isDateTime(item["created"]) && isDateTime(item["modified"]), "\(id)")
            let target = try #require(item["target"])
            if let resource = target as? [String: Any] {
                #expect(isIRI(resource["source"]), "\(id): a target's source is an IRI")
                #expect(resource["type"] as? String == "SpecificResource")
                let selectors =
                    (resource["selector"] as? [[String: Any]]) ?? [resource["selector"] as? [String: Any] ?? [:]]
                for selector in selectors + selectors.compactMap({ $0["refinedBy"] as? [String: Any] }) {
                    switch selector["type"] as? String {
                    case "TextQuoteSelector":
                        #expect(selector["exact"] is String, "\(id): TextQuoteSelector has exact")
                        highlights += 1
                    case "TextPositionSelector":
                        let start = selector["start"] as? Int ?? -1
                        let end = selector["end"] as? Int ?? -1
                        #expect(start >= 0 && end >= start, "\(id)")
                    case "FragmentSelector":
                        #expect(selector["value"] is String && isIRI(selector["conformsTo"]), "\(id)")
                        #expect((selector["value"] as? String)?.hasPrefix("page=") == true)
                    default: Issue.record("\(id): an unknown selector \(selector)")
                    }
                }
            } else {
                #expect(isIRI(target), "\(id): a target is an IRI or a resource")
            }
            if let body = item["body"] as? [String: Any] {
                #expect(body["type"] as? String == "TextualBody" && body["value"] is String, "\(id)")
            }
            if let creator = item["creator"] as? [String: Any] { #expect(creator["name"] is String, "\(id)") }
        }
        #expect(highlights == 6)
        // Sources name the PDF by its bytes (these books came from files, not web addresses).
        let sources = Set(items.compactMap { (($0["target"] as? [String: Any])?["source"] ?? $0["target"]) as? String })
        #expect(sources.allSatisfy { $0.hasPrefix("urn:sha256:") } && sources.count == 3, "\(sources)")
    }

    /// Files other tools wrote, made by `fixtures/make-interchange.py`.
    static func otherTools() throws -> String {
        let folder = NSTemporaryDirectory() + "margin-interchange-\(getpid())/" + UUID().uuidString
        let made = try runProcess("/usr/bin/env", ["python3", Fixtures.root + "/fixtures/make-interchange.py", folder])
        guard made.status == 0 else { throw ZoteroFixture.FixtureError.failed(made.stderr) }
        return folder
    }

    /// Hypothesis's export: its `uri`, `text` (the note), `user` and selectors, matched by DOI.
    @Test func aHypothesisExportComesInByItsDocumentsDOI() throws {
        let files = try Self.otherTools()
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("meta", "1", "--doi", "10.5555/sample.1")
        let file = files + "/hypothesis.json"
        let dry = try #require(
            try box.ok("import", "web-annotations", file, "--dry-run", "--json").json() as? [String: Any])
        let report = try #require(try box.ok("import", "web-annotations", file, "--json").json() as? [String: Any])
        for counts in [dry, report] {
            #expect((counts["highlights"] as? [String: Any])?["added"] as? Int == 1)
            #expect((counts["memos"] as? [String: Any])?["added"] as? Int == 1)
            #expect((counts["skipped"] as? [[String: String]])?.first?["why"]?.contains("no book") == true)
        }
        let highlight = try #require((try box.ok("highlight", "list", "--json").json() as? [[String: Any]])?.first)
        // "quick brown fox" is on pages 1 and 2: its context says page 2.
        #expect(highlight["page"] as? Int == 2)
        #expect(highlight["note"] as? String == "a note from the web")
        #expect(highlight["author"] as? String == "reader@hypothes.is")
        #expect((highlight["rects"] as? [[Double]])?.isEmpty == false)
        let memo = try #require((try box.ok("memo", "list", "--json").json() as? [[String: Any]])?.first)
        #expect(memo["page"] as? Int == 3 && memo["text"] as? String == "a page note, no quote")
        let again = try #require(try box.ok("import", "web-annotations", file, "--json").json() as? [String: Any])
        #expect(again["added"] as? Int == 0)
        // Not JSON, or JSON with no annotation: said, nothing imported.
        let before = try box.snapshot()
        let broken = files + "/broken.json"
        try "[{\"id\": ".write(toFile: broken, atomically: true, encoding: .utf8)
        #expect(try box.fails("import", "web-annotations", broken).stderr.contains("is not JSON: "))
        try "{\"rows\": []}".write(toFile: broken, atomically: true, encoding: .utf8)
        #expect(try box.fails("import", "web-annotations", broken).stderr.contains("holds no annotation"))
        #expect(try box.snapshot() == before)
    }

    /// A quote found more than once, with nothing around it to tell which: the
    /// TextPositionSelector says — in the page's text when it refines a page's fragment, in the
    /// whole document's when it stands alone (as Hypothesis writes it).
    @Test func aTextPositionTellsApartWhatTheQuoteCannot() throws {
        func text(_ box: Sandbox, _ page: Int) throws -> String {
            let pages = try #require(try box.ok("text", "1", "--pages", "\(page)", "--json").json() as? [[String: Any]])
            return try #require(pages.first?["text"] as? String)
        }
        func offset(of needle: String, in haystack: String) throws -> Int {
            let range = try #require(haystack.range(of: needle))
            return haystack.unicodeScalars.distance(from: haystack.startIndex, to: range.lowerBound)
        }
        let probe = Sandbox()
        try probe.ok("add", Fixtures.pdf("sample.pdf"))
        let first = try text(probe, 1)
        let second = try text(probe, 2)
        // "the" three times on page 1: the second; "quick brown fox" on pages 1 and 2: page 2's.
        let the = try offset(of: "the history", in: first)
        let fox = first.unicodeScalars.count + 1 + (try offset(of: "quick brown fox", in: second))
        func annotations(withPositions: Bool) -> String {
            let inPage =
                withPositions
                ? #", "refinedBy": {"type": "TextPositionSelector", "start": \#(the), "end": \#(the + 3)}"# : ""
            let inBook =
                withPositions ? #", {"type": "TextPositionSelector", "start": \#(fox), "end": \#(fox + 15)}"# : ""
            return """
                [{"type": "Annotation", "id": "urn:uuid:7b0c7a4e-0000-4000-8000-000000000001", "target": {"source": "urn:sha256:SHA",
                  "selector": [{"type": "TextQuoteSelector", "exact": "the"},
                               {"type": "FragmentSelector", "value": "page=1"\(inPage)}]}},
                 {"type": "Annotation", "id": "urn:uuid:7b0c7a4e-0000-4000-8000-000000000002", "target": {"source": "urn:sha256:SHA",
                  "selector": [{"type": "TextQuoteSelector", "exact": "quick brown fox"}\(inBook)]}}]
                """
        }
        let sha = try #require((try probe.ok("show", "1", "--json").json() as? [String: Any])?["sha256"] as? String)
        var placed = [Bool: [[String: Any]]]()
        for withPositions in [false, true] {
            let box = Sandbox()
            try box.ok("add", Fixtures.pdf("sample.pdf"))
            let file = box.folder.path + "/w3c.json"
            try annotations(withPositions: withPositions).replacingOccurrences(of: "SHA", with: sha)
                .write(toFile: file, atomically: true, encoding: .utf8)
            try box.ok("import", "web-annotations", file)
            placed[withPositions] = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        }
        func found(_ text: String, _ withPositions: Bool) throws -> (page: Int, top: Double) {
            let highlight = try #require(placed[withPositions]?.first { $0["text"] as? String == text })
            let rect = try #require((highlight["rects"] as? [[Double]])?.first)
            return (try #require(highlight["page"] as? Int), rect[3])
        }
        // Without positions: the first of each. With them: the one they point at.
        #expect(try found("quick brown fox", false).page == 1)
        #expect(try found("quick brown fox", true).page == 2)
        let plain = try found("the", false)
        let hinted = try found("the", true)
        #expect(plain.page == 1 && hinted.page == 1)
        #expect(hinted.top < plain.top - 5, "the line below: \(hinted) against \(plain)")
    }

    /// XFDF as Acrobat writes it: highlight, underline and strikeout become highlights (the
    /// words under their quad points), the sticky note and text box memos; the ink is left out.
    @Test func anAcrobatXFDFComesIn() throws {
        let files = try Self.otherTools()
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let report = try #require(
            try box.ok("import", "xfdf", files + "/acrobat.xfdf", "--book", "1", "--json").json() as? [String: Any])
        #expect((report["highlights"] as? [String: Any])?["added"] as? Int == 3)
        #expect((report["memos"] as? [String: Any])?["added"] as? Int == 2)
        let skipped = try #require(report["skipped"] as? [[String: String]])
        #expect(skipped.count == 1 && skipped[0]["what"]?.hasPrefix("<ink> 'acro-0006'") == true, "\(skipped)")
        let highlights = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        let texts = highlights.map { $0["text"] as? String ?? "" }.sorted()
        #expect(
            texts == [
                "Readers have always written", "The quick brown fox jumps over the lazy dog.",
                "history of notes. The quick brown",
            ], "\(texts)")
        let fox = try #require(highlights.first { ($0["text"] as? String)?.hasPrefix("The quick") == true })
        #expect(fox["note"] as? String == "Acrobat's note & more")
        #expect(fox["color"] as? String == "#ffff00" && fox["author"] as? String == "Jane Reader")
        let across = try #require(highlights.first { ($0["text"] as? String)?.hasPrefix("history") == true })
        #expect(across["note"] as? String == "struck across two lines")
        #expect((across["rects"] as? [[Double]])?.count == 2)
        let memos = try #require(try box.ok("memo", "list", "--json").json() as? [[String: Any]])
        #expect(
            memos.map { "\($0["page"] ?? "-") \($0["text"] ?? "")" }.sorted() == [
                "2 A sticky note on page two", "3 Typed on page three",
            ])
        let again = try #require(
            try box.ok("import", "xfdf", files + "/acrobat.xfdf", "--book", "1", "--json").json() as? [String: Any])
        #expect(again["added"] as? Int == 0 && again["unchanged"] as? Int == 5)
    }

    /// XFDF is read strictly: a DOCTYPE (external entities, a billion laughs), malformed XML or
    /// another root is one error, and nothing is imported.
    @Test func hostileXFDFIsRefusedAndImportsNothing() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let before = try box.snapshot()
        let files = TemporaryFolder()
        let laughs =
            "<!DOCTYPE xfdf [<!ENTITY a \"ha\"><!ENTITY b \"&a;&a;&a;&a;&a;&a;&a;&a;&a;&a;\">"
            + "<!ENTITY c \"&b;&b;&b;&b;&b;&b;&b;&b;&b;&b;\">]>"
        for (name, text, says) in [
            (
                "xxe.xfdf",
                "<?xml version=\"1.0\"?><!DOCTYPE xfdf [<!ENTITY x SYSTEM \"file:///etc/passwd\">]><xfdf xmlns=\"http://ns.adobe.com/xfdf/\"><annots><text page=\"0\"><contents>&x;</contents></text></annots></xfdf>",
                "DOCTYPE"
            ),
            (
                "laughs.xfdf",
                "<?xml version=\"1.0\"?>" + laughs
                    + "<xfdf><annots><text page=\"0\"><contents>&c;</contents></text></annots></xfdf>", "DOCTYPE"
            ),
            ("broken.xfdf", "<xfdf><annots><text page=\"0\"></annots>", "not well-formed"),
            ("other.xfdf", "<html><body/></html>", "not XFDF"),
        ] {
            let file = files.path + "/" + name
            try text.write(toFile: file, atomically: true, encoding: .utf8)
            let refused = try box.fails("import", "xfdf", file, "--book", "1")
            #expect(refused.stderr.contains(says) && !refused.stderr.contains("root:"), "\(name): \(refused)")
        }
        #expect(try box.snapshot() == before)
    }

    /// Obsidian: a note per book with front matter, a callout per highlight with its colour
    /// and page link, and block ids that are the same in every export.
    @Test func obsidianNotesKeepTheirBlockIdsFromOneExportToTheNext() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("meta", "1", "--doi", "10.5555/sample.1", "--year", "2019")
        try box.ok("edit", "1", "--tag", "reading")
        try box.ok("highlight", "add", "1", "--text", "quick brown fox jumps", "--note", "a note", "--color", "blue")
        let out = TemporaryFolder()
        try box.ok("export", "1", "--format", "obsidian", "-o", out.path + "/vault")
        let files = try FileManager.default.contentsOfDirectory(atPath: out.path + "/vault")
        #expect(files == ["A Sample Paper.md"])
        let note = try String(contentsOfFile: out.path + "/vault/" + files[0], encoding: .utf8)
        #expect(note.hasPrefix("---\ntitle: \"A Sample Paper\"\n"), "\(note)")
        for line in [
            "year: 2019", "doi: \"10.5555/sample.1\"", "tags: [\"reading\"]", "> quick brown fox jumps",
            "> **Note:** a note",
        ] {
            #expect(note.contains(line), "\(line): \(note)")
        }
        #expect(note.contains("> [!quote|#2ea8e5] [p. 1]("), "\(note)")
        let ids = note.split(separator: "\n").filter { $0.hasPrefix("^m-") }
        #expect(ids.count == 1)
        try box.ok("highlight", "add", "1", "--text", "Zebra crossings")
        try box.ok("export", "1", "--format", "obsidian", "-o", out.path + "/vault", "--force")
        let again = try String(contentsOfFile: out.path + "/vault/" + files[0], encoding: .utf8)
        #expect(again.contains(String(ids[0])), "the first highlight's block id stays")
        #expect(again.split(separator: "\n").filter { $0.hasPrefix("^m-") }.count == 2)
        // Without a folder: said, nothing written.
        #expect(try box.fails("export", "1", "--format", "obsidian").stderr.contains("give -o FOLDER"))
    }

    @Test func readwiseGetsTheColumnsItImports() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("highlight", "add", "1", "--text", "quick brown fox jumps", "--note", "with, a comma \"quoted\"")
        let csv = try box.ok("export", "1", "--format", "readwise").stdout
        let lines = csv.split(separator: "\n")
        #expect(lines.first == "Highlight,Title,Author,URL,Note,Location,Date")
        #expect(lines.count == 2)
        #expect(lines[1].hasPrefix("quick brown fox jumps,A Sample Paper,"), "\(csv)")
        #expect(lines[1].contains(",\"with, a comma \"\"quoted\"\"\",1,"), "\(csv)")
    }

    /// A team library takes in what a personal one gave out, in each format, and gives it
    /// out again the same.
    @Test(
        needsCorpus,
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"),
        arguments: ["web-annotation", "xfdf", "koreader"])
    func aTeamLibraryRoundTrips(format: String) throws {
        let source = Sandbox()
        try Self.annotated { try source.ok($0) }
        let before = try Self.annotations { try source.ok($0) }
        let out = TemporaryFolder()
        let path = out.path + "/export" + (format == "web-annotation" ? ".json" : "")
        try source.ok("export", "--all", "--format", format, "-o", path)
        let team = try TeamUsersTests.Team()
        _ = try team.alice(["add", "-q"] + Self.pdfs)
        _ = try Self.bringIn(format, from: path, []) { try team.alice($0) }
        let after = try Self.annotations { try team.alice($0) }
        // The team says who made each: the author the other tool named, else alice, who took them in.
        func asBefore(_ lines: [String]) -> [String] {
            lines.map {
                $0.replacingOccurrences(
                    of: #"\| alice_[0-9a-f]+( \||$)"#, with: "| <null>$1", options: .regularExpression)
            }
        }
        #expect(asBefore(after.highlights) == before.highlights)
        #expect(after.highlights.filter { $0.contains("| alice_") }.count == 5, "\(after.highlights)")
        switch format {
        case "xfdf": #expect(asBefore(after.memos) == before.memos && after.bookmarks.isEmpty)
        case "koreader":
            #expect(asBefore(after.memos) == before.memos.filter { !$0.contains("p- ") })
            #expect(after.bookmarks == before.bookmarks)
        default: #expect(asBefore(after.memos) == before.memos && after.bookmarks == before.bookmarks)
        }
        for result in try Self.bringIn(format, from: path, [], run: { try team.alice($0) }) {
            let again = try #require(try result.json() as? [String: Any])
            #expect(again["added"] as? Int == 0 && again["updated"] as? Int == 0, "\(result.stdout)")
        }
        // Out of the team library and into a fresh personal one: the same again.
        let back = TemporaryFolder()
        let second = back.path + "/export" + (format == "web-annotation" ? ".json" : "")
        _ = try team.alice(["export", "--all", "--format", format, "-o", second])
        let fresh = Sandbox()
        try fresh.ok(["add", "-q"] + Self.pdfs)
        _ = try Self.bringIn(format, from: second, []) { try fresh.ok($0) }
        #expect(try Self.annotations { try fresh.ok($0) }.highlights == after.highlights)
    }
}

import Foundation
import TestSupport
import Testing

/// Scanned pages made from born-digital fixtures by `fixtures/make-scans.py`, read by the real
/// Tesseract through margin; the born-digital PDF is the ground truth.
enum Scans {
    static let tesseract = ["/usr/bin/tesseract"].first { FileManager.default.isExecutableFile(atPath: $0) }
    static let pdftoppm = ["/usr/bin/pdftoppm"].first { FileManager.default.isExecutableFile(atPath: $0) }

    /// The folder of scans, made once for the test run; nil when they can't be made.
    static let folder: String? = {
        let folder = NSTemporaryDirectory() + "margin-scans-\(getpid())"
        guard pdftoppm != nil, ReferenceReaders.qpdf != nil,
            let made = try? runProcess("/usr/bin/env", ["python3", Fixtures.root + "/fixtures/make-scans.py", folder]),
            made.status == 0
        else { return nil }
        return folder
    }()

    static var available: Bool { tesseract != nil && folder != nil }
    static let needs = Prerequisite.needs(
        available, "needs tesseract, pdftoppm, qpdf and Pillow (make test installs them)")

    static func path(_ name: String) -> String { (folder ?? "") + "/" + name }

    /// The born-digital PDF a scan was made from: a fixture, or one the script made.
    static func truthFile(_ name: String) -> String { name == "sample.pdf" ? Fixtures.pdf(name) : path(name) }

    /// The words of a text, lowercased, letters and digits only.
    static func words(_ text: String) -> [String] {
        text.lowercased().split { !$0.isLetter && !$0.isNumber }.map(String.init)
    }

    /// The share of `truth`'s words (each as many times as it stands there) that `read` holds.
    static func recall(_ read: String, of truth: String) -> Double {
        var left = Dictionary(words(read).map { ($0, 1) }, uniquingKeysWith: +)
        let expected = words(truth)
        var found = 0
        for word in expected where (left[word] ?? 0) > 0 {
            left[word, default: 0] -= 1
            found += 1
        }
        return expected.isEmpty ? 1 : Double(found) / Double(expected.count)
    }

    /// What the `tesseract` CLI reads on page `page` of `pdf`, drawn at `dpi` by pdftoppm.
    static func cliText(_ pdf: String, page: Int, dpi: Int) throws -> String {
        let folder = TemporaryFolder()
        let stem = folder.path + "/page"
        _ = try runProcess(
            pdftoppm ?? "",
            ["-gray", "-r", String(dpi), "-f", String(page), "-l", String(page), "-singlefile", "-png", pdf, stem])
        var environment = ProcessInfo.processInfo.environment
        environment["OMP_THREAD_LIMIT"] = "1"
        return try runProcess(tesseract ?? "", [stem + ".png", "-"], environment: environment).stdout
    }

    /// The born-digital text of page `page` of sample.pdf.
    static func truth(page: Int) throws -> String {
        try runProcess("/usr/bin/pdftotext", ["-f", String(page), "-l", String(page), Fixtures.pdf("sample.pdf"), "-"])
            .stdout
    }
}

@Suite struct OCRTests {
    func book(_ box: Sandbox, _ selector: String) throws -> [String: Any] {
        try #require(try box.ok("show", selector, "--json").json() as? [String: Any])
    }

    func text(_ box: Sandbox, _ selector: String, page: Int) throws -> String {
        try box.ok("text", selector, "--pages", String(page)).stdout
    }

    @Test(Scans.needs) func scannedPagesAreReadAsWellAsTheTesseractCLIReadsThem() throws {
        let box = Sandbox()
        try box.ok("add", Scans.path("scan-clean.pdf"), Scans.path("scan-rough.pdf"))
        let clean = try book(box, "1")
        #expect(clean["ocrPages"] as? Int == 3)
        #expect(clean["textlessPages"] as? Int == 0)
        #expect((clean["ocrConfidence"] as? Double ?? 0) > 80)
        for (selector, file, page, dpi) in [
            ("1", "scan-clean.pdf", 1, 300), ("1", "scan-clean.pdf", 2, 300), ("2", "scan-rough.pdf", 1, 200),
        ] {
            let truth = try Scans.truth(page: selector == "2" ? 1 : page)
            let margin = Scans.recall(try text(box, selector, page: page), of: truth)
            let cli = Scans.recall(try Scans.cliText(Scans.path(file), page: page, dpi: dpi), of: truth)
            // The same engine on the same page: margin draws it with cairo, pdftoppm with Splash,
            // so a word may go either way.
            #expect(margin >= cli - 0.03, "\(file) p. \(page): margin \(margin), tesseract CLI \(cli)")
            #expect(margin >= 0.85, "\(file) p. \(page): \(margin)")
        }
        // The title is found on the recognized first page.
        #expect(clean["title"] as? String == "A Sample Paper on Marginalia")
    }

    @Test(Scans.needs) func searchFindsScannedWordsOnTheirPages() throws {
        let box = Sandbox()
        try box.ok("add", Scans.path("scan-clean.pdf"))
        let hits = try #require(try box.ok("search", "inverted index", "--json").json() as? [[String: Any]])
        #expect(hits.map { $0["page"] as? Int } == [2])
        let fox = try #require(try box.ok("search", "quick brown fox", "--json").json() as? [[String: Any]])
        #expect(Set(fox.compactMap { $0["page"] as? Int }) == [1, 2])
    }

    /// A highlight made on scanned words sits where the born-digital page has them (on a page
    /// shown through a /CropBox, where the same page born-digital and cropped alike has them).
    @Test(
        Scans.needs,
        arguments: [
            ("scan-clean.pdf", "sample.pdf"), ("scan-rotated.pdf", "sample.pdf"),
            ("scan-cropped.pdf", "born-cropped.pdf"),
        ])
    func highlightsSitOnTheScannedWords(file: String, truth: String) throws {
        func rect(_ box: Sandbox, _ selector: String, _ text: String) throws -> [Double] {
            let made = try #require(
                try box.ok("highlight", "add", selector, "--text", text, "--page", "1", "--json").json()
                    as? [[String: Any]])
            let rects = try #require(made.first?["rects"] as? [[Double]])
            #expect(rects.count == 1)
            return try #require(rects.first)
        }
        func iou(_ a: [Double], _ b: [Double]) -> Double {
            let width = max(0, min(a[2], b[2]) - max(a[0], b[0]))
            let height = max(0, min(a[3], b[3]) - max(a[1], b[1]))
            let shared = width * height
            return shared / ((a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - shared)
        }
        let born = Sandbox()
        try born.ok("add", Scans.truthFile(truth))
        let scanned = Sandbox()
        try scanned.ok("add", Scans.path(file))
        for words in ["quick brown fox", "history of notes", "Marginalia"] {
            let expected = try rect(born, "1", words)
            let placed = try rect(scanned, "1", words)
            #expect(iou(expected, placed) >= 0.6, "\(file) '\(words)': \(placed) against \(expected)")
        }
        let listed = try #require(try scanned.ok("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(listed.compactMap { $0["text"] as? String }.contains("quick brown fox"))
    }

    @Test(Scans.needs) func aMixedPDFReadsOnlyItsScannedPages() throws {
        let box = Sandbox()
        try box.ok("add", Scans.path("scan-mixed.pdf"))
        let mixed = try book(box, "1")
        #expect(mixed["ocrPages"] as? Int == 1)
        #expect(mixed["textlessPages"] as? Int == 0)
        let born = Sandbox()
        try born.ok("add", Fixtures.pdf("sample.pdf"))
        #expect(try text(box, "1", page: 1) == text(born, "1", page: 1))
        #expect(Scans.recall(try text(box, "1", page: 2), of: try Scans.truth(page: 2)) >= 0.85)
    }

    /// What was read is kept by the PDF's SHA-256 and page: reindexing, removing and adding the
    /// file again, or copying the library reads nothing again.
    @Test(Scans.needs) func aPageIsNeverReadTwice() throws {
        let box = Sandbox()
        try box.ok("add", Scans.path("scan-clean.pdf"))
        let database = box.home + "/library.sqlite"
        func rows() throws -> String {
            try runProcess("/usr/bin/sqlite3", [database, "SELECT id, page, createdAt FROM ocr_page ORDER BY page"])
                .stdout
        }
        let first = try rows()
        #expect(first.split(separator: "\n").count == 3)
        try box.ok("reindex", "1")
        try box.ok("ocr", "1")
        #expect(try rows() == first)
        try box.ok("rm", "1", "--yes")
        try box.ok("add", Scans.path("scan-clean.pdf"))
        #expect(try rows() == first)
        #expect(try book(box, "2")["ocrPages"] as? Int == 3)
        // Asked to, it reads them again.
        try box.ok("ocr", "2", "--force")
        #expect(try rows() != first)
    }

    @Test(Scans.needs) func pagesAreReadOnlyAsAsked() throws {
        let box = Sandbox()
        let added = try box.ok("add", Scans.path("scan-clean.pdf"), "--ocr", "never")
        #expect(added.stderr.contains("nothing legible on pages 1-3 of 'scan-clean'; 'margin ocr 1' reads"), "\(added)")
        let unread = try book(box, "1")
        #expect(unread["ocrPages"] as? Int == 0)
        #expect(unread["textlessPages"] as? Int == 3)
        #expect((try box.ok("search", "marginalia", "--json").json() as? [[String: Any]])?.isEmpty == true)
        // `margin ocr` reads the pages of a book in the library: only those asked for, that it has.
        #expect(try box.fails("ocr", "1", "--pages", "5").stderr.contains("valid pages are 1-3"))
        #expect(try box.fails("ocr", "1", "--pages", "0-2").stderr.contains("pages count from 1"))
        try box.ok("ocr", "1", "--pages", "2")
        #expect(try book(box, "1")["ocrPages"] as? Int == 1)
        try box.ok("ocr", "--all")
        let read = try book(box, "1")
        #expect(read["ocrPages"] as? Int == 3)
        #expect(read["textlessPages"] as? Int == 0)
        let hits = try #require(try box.ok("search", "marginalia", "--json").json() as? [[String: Any]])
        #expect(hits.first?["page"] as? Int == 1)
    }

    @Test(Scans.needs) func aMissingLanguageIsOneErrorAndChangesNothing() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("second.pdf"))
        let before = try box.snapshot()
        let failed = try box.fails("add", Scans.path("scan-clean.pdf"), "--ocr-lang", "eng+zzz")
        #expect(failed.stderr.contains("tesseract-ocr-zzz"), "\(failed)")
        let again = try box.fails("ocr", "1", "--lang", "qqq")
        #expect(again.stderr.contains("tesseract-ocr-qqq"), "\(again)")
        #expect(try box.snapshot() == before)
        try box.fails("add", Scans.path("scan-clean.pdf"), "--ocr", "sometimes")
        #expect(try box.snapshot() == before)
    }

    /// Pages with nothing to read (noise, a strip too thin for a letter) end as textless pages
    /// of a book that is added; nothing crashes or hangs.
    @Test(Scans.needs) func pagesWithNothingToReadAreTextless() throws {
        let box = Sandbox()
        let added = try box.ok("add", Scans.path("scan-noise.pdf"), Scans.path("scan-strip.pdf"))
        #expect(added.stderr.contains("note: nothing legible on page 1 of 'scan-noise'"), "\(added)")
        #expect(added.stderr.contains("note: nothing legible on page 1 of 'scan-strip'"), "\(added)")
        for selector in ["1", "2"] {
            let read = try book(box, selector)
            #expect(read["textlessPages"] as? Int == 1, "\(read)")
            #expect(read["ocrPages"] as? Int == 0, "\(read)")
        }
    }

    /// A page of 200 by 200 inches is drawn at what its pixels allow (not 300 dpi: 3.6 billion
    /// pixels), and read.
    @Test(Scans.needs) func anEnormousPageIsReadAtTheResolutionItsSizeAllows() throws {
        let box = Sandbox()
        try box.ok("add", Scans.path("scan-huge.pdf"))
        let read = try book(box, "1")
        #expect(read["ocrPages"] as? Int == 1, "\(read)")
        #expect(try text(box, "1", page: 1).contains("quick brown fox"))
        let dpi = try runProcess(
            "/usr/bin/sqlite3", [box.home + "/library.sqlite", "SELECT dpi FROM ocr_page"]
        ).stdout
        #expect((Double(dpi.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 300) < 40, "\(dpi)")
    }

    /// What OCR read goes with the library (`db copy`), and once its PDF is gone `db check` says
    /// so and `--repair` removes it.
    @Test(Scans.needs) func recognitionTravelsWithTheLibraryAndLeavesWithItsPDF() throws {
        let box = Sandbox()
        try box.ok("add", Scans.path("scan-clean.pdf"))
        func rows(_ home: String) throws -> String {
            try runProcess(
                "/usr/bin/sqlite3", [home + "/library.sqlite", "SELECT uuid, page, words FROM ocr_page ORDER BY page"]
            )
            .stdout
        }
        let copy = box.folder.path + "/copy"
        let report = try #require(try box.ok("db", "copy", "--to", copy, "--json").json() as? [String: Any])
        #expect(report["recognizedPages"] as? Int == 3)
        #expect(try rows(copy) == rows(box.home))
        try box.ok("--library", copy, "reindex")
        #expect(try rows(copy) == rows(box.home), "the copy reads nothing again")
        let copied = try #require(try box.ok("--library", copy, "show", "1", "--json").json() as? [String: Any])
        #expect(copied["ocrPages"] as? Int == 3)

        try box.ok("rm", "1", "--yes")
        try box.ok("cache", "prune")
        let check = try #require(try box.margin.run(["db", "check", "--json"]).json() as? [String: Any])
        let gone = try #require(check["unusedRecognition"] as? [String])
        #expect(gone.count == 1 && gone[0].hasSuffix("(3 pages)"), "\(gone)")
        try box.ok("db", "check", "--repair")
        let status = try #require(try box.ok("db", "status", "--json").json() as? [String: Any])
        #expect((status["counts"] as? [String: Int])?["recognizedPages"] == 0)
    }

    /// The rule for a usable text layer, on the pages margin makes of it.
    @Test(Scans.needs) func pagesWithoutUsableTextAreRead() throws {
        let box = Sandbox()
        // Born-digital pages with text are left as they are under auto; always reads them too.
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        #expect(try book(box, "1")["ocrPages"] as? Int == 0)
        try box.ok("reindex", "1", "--ocr", "always")
        #expect(try book(box, "1")["ocrPages"] as? Int == 3)
    }

    /// Ctrl-C in the middle of `margin ocr` keeps the pages read so far, and the same command
    /// goes on from there: what was kept is not read again.
    @Test(Scans.needs) func anInterruptedOCRKeepsThePagesReadAndGoesOn() throws {
        let box = Sandbox()
        try box.ok("add", Scans.path("scan-long.pdf"), "--ocr", "never")
        let database = box.home + "/library.sqlite"
        func rows() throws -> [String] {
            try runProcess("/usr/bin/sqlite3", [database, "SELECT id, page, createdAt FROM ocr_page ORDER BY page"])
                .stdout.split(separator: "\n").map(String.init)
        }
        let process = Process()
        process.executableURL = URL(fileURLWithPath: MarginRunner.binary)
        process.arguments = ["ocr", "1"]
        var environment = ProcessInfo.processInfo.environment
        environment["MARGIN_HOME"] = box.home
        process.environment = environment
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.start()
        // Interrupted once the first pages are kept (the rest take seconds more to read).
        let deadline = Date().addingTimeInterval(120)
        while try rows().isEmpty, process.isRunning, Date() < deadline { usleep(20_000) }
        kill(process.processIdentifier, SIGINT)
        process.waitUntilExit()
        #expect(process.terminationStatus == 130)
        let kept = try rows()
        #expect(!kept.isEmpty && kept.count < 40, "\(kept.count) pages kept")
        #expect(try book(box, "1")["ocrPages"] as? Int == 0, "the book's text is replaced once all is read")
        try box.ok("ocr", "1")
        let all = try rows()
        #expect(all.count == 40)
        #expect(Set(kept).isSubset(of: Set(all)), "what was kept is not read again")
        #expect(try book(box, "1")["ocrPages"] as? Int == 40)
    }

    /// On a terminal, `add`, `reindex` and `ocr` show each page as it is read (pages, pages a
    /// second, time left); with --json or off a terminal nothing is drawn.
    @Test(Scans.needs) func aTerminalShowsThePagesAsTheyAreRead() throws {
        let box = Sandbox()
        let added = try box.onTerminal(["add", Scans.path("scan-clean.pdf")])
        for read in 0..<3 {
            #expect(added.contains("scan-clean.pdf") && added.contains("OCR \(read)/3 pages"), "\(added)")
        }
        #expect(added.contains("pages/s") && added.contains(" left"), "\(added)")
        #expect(added.contains("added 1  A Sample Paper on Marginalia (3 pages"), "\(added)")
        let again = try box.onTerminal(["ocr", "1", "--force", "--pages", "2-3"])
        #expect(again.contains("OCR 1/2 pages") && !again.contains("/3 pages"), "\(again)")
        // What was read is not read again: reindex counts books, and reads no page.
        let reindexed = try box.onTerminal(["reindex", "1"])
        #expect(!reindexed.contains("OCR"), "\(reindexed)")
        #expect(reindexed.contains("indexed 1"), "\(reindexed)")
        let quiet = try box.onTerminal(["reindex", "1", "--ocr", "always", "--json"])
        #expect(!quiet.contains("pages/s") && !quiet.contains("\u{1B}["), "\(quiet)")
        let piped = try box.ok("ocr", "1", "--force")
        #expect(piped.stderr.isEmpty, "\(piped)")
    }

    /// In a team library what OCR read is the text of the team's PDF: every member searches it,
    /// and only who may change that text (who added the book) may change it, through margin or psql.
    @Test(
        Scans.needs,
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aTeamReadsScansAndNoMemberRewritesWhatOCRRead() throws {
        let team = try TeamUsersTests.Team()
        try team.alice("add", "-q", Scans.path("scan-clean.pdf"))
        let shown = try #require(try team.alice("show", "1", "--json").json() as? [String: Any])
        #expect(shown["ocrPages"] as? Int == 3)
        let hits = try #require(try team.bob("search", "marginalia", "--json").json() as? [[String: Any]])
        #expect(hits.first?["page"] as? Int == 1)
        try team.bob("highlight", "add", "1", "--text", "quick brown fox", "--page", "1", "--shared")
        let asBob = team.bobURL
        let snapshot = {
            try TestCluster.psql(
                team.admin, "SELECT md5(string_agg(t::text, '|' ORDER BY t::text)) FROM margin.ocr_page t")
        }
        let before = try snapshot()
        #expect(Int(try TestCluster.psql(asBob, "SELECT count(*) FROM margin.ocr_page")) == 3, "bob reads it")
        for sql in ["DELETE FROM margin.ocr_page", "UPDATE margin.ocr_page SET words = '[]'"] {
            _ = try? TestCluster.psql(asBob, sql)
        }
        #expect(throws: (any Error).self) {
            try TestCluster.psql(
                asBob,
                "INSERT INTO margin.ocr_page (uuid, sha256, page, words, confidence, engine, languages, dpi, \"createdAt\") "
                    + "SELECT gen_random_uuid(), sha256, 9, '[]', 99, 'forged', 'eng', 300, now() FROM margin.book")
        }
        #expect(try snapshot() == before, "nothing changed")
        #expect(try team.bobFails("ocr", "1", "--force").stderr.contains("\(team.alice) (who added it)"))
        // Refused before a page is read, not after minutes of reading.
        let screen = try team.bobBox.onTerminal(["ocr", "1", "--force"], environment: ["MARGIN_LIBRARY": asBob])
        #expect(screen.contains("who added it") && !screen.contains("OCR 0/"), "\(screen)")
        #expect(try snapshot() == before)
    }

    /// `export --format pdf --text-layer` writes a copy whose scanned pages carry what OCR read as
    /// invisible text where the words are: pdftotext and pdfgrep read it, a rotated page too.
    @Test(
        Scans.needs,
        arguments: [
            ("scan-clean.pdf", "sample.pdf"), ("scan-rotated.pdf", "sample.pdf"),
            ("scan-cropped.pdf", "born-cropped.pdf"),
        ])
    func aSearchableCopyCarriesTheWordsWhereTheyAre(file: String, truth: String) throws {
        let box = Sandbox()
        try box.ok("add", Scans.path(file))
        try box.ok("highlight", "add", "1", "--text", "quick brown fox", "--page", "1")
        let plain = box.folder.path + "/plain.pdf"
        try box.ok("export", "1", "--format", "pdf", "-o", plain)
        #expect(try Scans.words(runProcess("/usr/bin/pdftotext", [plain, "-"]).stdout).isEmpty)
        let searchable = box.folder.path + "/searchable.pdf"
        try box.ok("export", "1", "--format", "pdf", "--text-layer", "-o", searchable)
        let read = try runProcess("/usr/bin/pdftotext", ["-f", "1", "-l", "1", searchable, "-"]).stdout
        #expect(Scans.recall(read, of: try Scans.truth(page: 1)) >= 0.85, "\(read)")
        if file == "scan-clean.pdf" {
            let found = try runProcess("/usr/bin/pdfgrep", ["-n", "inverted index", searchable]).stdout
            #expect(found.hasPrefix("2:"), "\(found)")
        }
        // Each word where the born-digital page has it (pdftotext's boxes: the page as shown).
        func boxes(_ pdf: String) throws -> [String: [Double]] {
            let xhtml = try runProcess("/usr/bin/pdftotext", ["-bbox", "-f", "1", "-l", "1", pdf, "-"]).stdout
            var found = [String: [Double]]()
            for line in xhtml.split(separator: "\n") where line.contains("<word ") {
                let numbers = line.split(separator: "\"").compactMap { Double($0) }
                guard numbers.count == 4,
                    let word = line.split(separator: ">").dropFirst().first?.split(separator: "<").first
                else { continue }
                found[String(word)] = found[String(word)] ?? numbers
            }
            return found
        }
        let expected = try boxes(Scans.truthFile(truth))
        let placed = try boxes(searchable)
        for word in ["Marginalia", "margins", "quick", "lazy"] {
            let a = try #require(placed[word], "\(word) in \(placed.keys.sorted())")
            let b = try #require(expected[word])
            let shared = max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
            let union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - shared
            #expect(shared / union >= 0.6, "\(word): \(a) against \(b)")
        }
        // The highlight is on the copy too.
        let annotations = try runProcess(
            "/usr/bin/env",
            ["python3", "-c", "import sys; print(open(sys.argv[1], 'rb').read().count(b'/Highlight'))", searchable]
        ).stdout
        #expect(Int(annotations.trimmingCharacters(in: .whitespacesAndNewlines)) ?? 0 >= 1)
        try box.fails("export", "1", "--format", "markdown", "--text-layer")
    }

    /// A real scan from the corpus, its page images in JPEG 2000 with a JBIG2 mask, and a text
    /// layer its scanner's OCR made: auto leaves that layer; always reads the images again, and
    /// reads what the scanner's OCR read.
    @Test(Scans.needs, Prerequisite.needs(Fixtures.corpus != nil, "../shared/corpus is absent"))
    func aRealScanWithJBIG2AndJPEG2000ImagesIsRead() throws {
        let scan = try #require(Fixtures.corpus) + "/real/pypdf__Seige_of_Vicksburg_Sample_OCR.pdf"
        let box = Sandbox()
        try box.ok("add", scan)
        #expect(try book(box, "1")["ocrPages"] as? Int == 0, "its own text layer is usable")
        try box.ok("reindex", "1", "--ocr", "always")
        let read = try book(box, "1")
        #expect(read["ocrPages"] as? Int == 6, "\(read)")
        for page in 1...6 {
            let theirs = try runProcess("/usr/bin/pdftotext", ["-f", String(page), "-l", String(page), scan, "-"])
                .stdout
            let recall = Scans.recall(try text(box, "1", page: page), of: theirs)
            #expect(recall >= 0.8, "p. \(page): \(recall)")
        }
    }

    /// A new version of a scanned book whose pages are drawn the same as the old one's reads
    /// only its new pages: the others take what was read on the old file (kept with its date).
    @Test(Scans.needs) func aNewVersionReadsOnlyItsNewPages() throws {
        let old = Fixtures.bytes(Scans.path("scan-clean.pdf"))
        let folder = TemporaryFolder()
        let revised = folder.path + "/revised.pdf"
        // The same three pages (written anew: other bytes), and a fourth.
        _ = try runProcess(
            ReferenceReaders.qpdf ?? "",
            [
                "--empty", "--pages", Scans.path("scan-clean.pdf"), "1-3", Scans.path("scan-small.pdf"), "1", "--",
                revised,
            ])
        let server = try TestHTTPServer(routes: ["/scan.pdf": .validated(old, etag: "\"one\"")])
        defer { server.shutdown() }
        let box = Sandbox()
        try box.ok("add", server.url("/scan.pdf"))
        try box.ok("highlight", "add", "1", "--text", "quick brown fox", "--page", "1")
        func rows(_ sha: String) throws -> [String] {
            try runProcess(
                "/usr/bin/sqlite3",
                [
                    box.home + "/library.sqlite",
                    "SELECT page, createdAt, words FROM ocr_page WHERE sha256 = '\(sha)' ORDER BY page",
                ]
            ).stdout.split(separator: "\n").map(String.init)
        }
        let first = try #require(try box.books().first?.string("sha256"))
        let before = try rows(first)
        #expect(before.count == 3)
        server.setRoute("/scan.pdf", .validated(Fixtures.bytes(revised), etag: "\"two\""))
        let outcome = try #require((try box.ok("refresh", "--json").json() as? [[String: Any]])?.first)
        #expect(outcome.string("status") == "updated")
        let second = try #require(try box.books().first?.string("sha256"))
        #expect(second != first)
        let after = try rows(second)
        #expect(after.count == 4)
        #expect(Array(after.prefix(3)) == before, "the same pages, read once: words and date of the first reading")
        #expect(after.last?.hasPrefix("4|") == true)
        #expect(after.last.map { !before.contains($0) } == true)
        #expect(try book(box, "1")["ocrPages"] as? Int == 4)
        let highlight = try #require((try box.ok("highlight", "list", "--json").json() as? [[String: Any]])?.first)
        #expect(highlight["orphaned"] as? Bool == false)
    }
}

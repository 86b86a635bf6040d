import Foundation
import TestSupport
import Testing

/// `margin toc`: the outline the PDF carries, with printed page numbers.
@Suite struct TocTests {
    @Test func tocListsTheOutlineWithPageLabels() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("outlined.pdf"), Fixtures.pdf("sample.pdf"))
        let entries = try #require(try box.ok("toc", "outlined", "--json").json() as? [[String: Any]])
        #expect(
            entries.map { $0["title"] as? String } == [
                "Preface", "1 Introduction", "1.1 Motivation", "1.2 Scope", "2 Method", "Appendix",
            ])
        #expect(entries.map { $0["page"] as? Int } == [1, 3, 3, 4, 5, 6])
        #expect(entries.map { $0["level"] as? Int } == [1, 1, 2, 2, 1, 1])
        #expect(entries.map { $0["pageLabel"] as? String } == ["i", "1", "1", "2", "3", "A-1"])
        let human = try box.ok("toc", "outlined").stdout
        #expect(human.contains("  1.1 Motivation  1 (p. 3)\n"), "\(human)")
        #expect(human.contains("Appendix  A-1 (p. 6)\n"))
        // No outline: nothing on stdout, [] in JSON.
        #expect((try box.ok("toc", "sample paper", "--json").json() as? [Any])?.isEmpty == true)
        let none = try box.ok("toc", "sample paper")
        #expect(none.stdout.isEmpty && none.stderr.contains("has no outline"))
    }

    /// A book's guide changed by hand (or another tool) into text that is no JSON: damaged page
    /// labels only name pages, so a search and `toc` go on without them; a damaged outline is
    /// one clear error naming the book, and the library is left as it was.
    @Test func aDamagedGuideIsReadWithoutItsLabelsOrRefusedClearly() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("outlined.pdf"))
        let database = box.home + "/library.sqlite"
        func hits() throws -> [[String: Any]] {
            try #require(try box.ok("search", "motivation", "--json").json() as? [[String: Any]])
        }
        #expect(try hits().first?["pageLabel"] as? String == "1")
        try runProcess("/usr/bin/sqlite3", [database, "UPDATE guide SET labels = '[1,'"])
        let found = try hits()
        #expect(found.first?["page"] as? Int == 3 && found.first?["pageLabel"] as? String == nil, "\(found)")
        let entries = try #require(try box.ok("toc", "1", "--json").json() as? [[String: Any]])
        #expect(entries.map { $0["page"] as? Int } == [1, 3, 3, 4, 5, 6])
        #expect(entries.map { $0["pageLabel"] as? String } == ["1", "3", "3", "4", "5", "6"], "by number: \(entries)")

        try runProcess("/usr/bin/sqlite3", [database, "UPDATE guide SET outline = '{\"title\"'"])
        let before = try runProcess("/usr/bin/sqlite3", [database, ".dump"]).stdout
        let failed = try box.fails("toc", "1")
        #expect(
            failed.stderr == "error: the outline stored for book 1 is damaged (not the JSON margin writes); "
                + "restore the library from a copy, or remove the book and add it again\n", "\(failed)")
        #expect(try runProcess("/usr/bin/sqlite3", [database, ".dump"]).stdout == before)
        #expect(try hits().first?["page"] as? Int == 3, "a search reads no outline")
    }

    /// The outline is stored with the text: `toc` needs no PDF. A library from before it was
    /// stored (v7) reads the PDF, and says how to get it when it is gone.
    /// Named destinations however the PDF holds them: the catalog's /Dests or the /Names tree,
    /// each as an array or a dictionary with /D, from /Dest or a GoTo action.
    @Test func entriesGoingToNamedDestinationsHaveTheirPages() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("named-dests.pdf"))
        let entries = try #require(try box.ok("toc", "1", "--json").json() as? [[String: Any]])
        #expect(
            entries.map { $0["title"] as? String } == [
                "Dests array", "Dests dictionary", "Names tree array", "Names tree dictionary", "GoTo a name",
                "Dictionary destination", "GoTo a dictionary",
            ])
        #expect(entries.map { $0["page"] as? Int } == [1, 2, 5, 4, 6, 3, 2])
        // The dictionary forms as MuPDF follows them.
        let mupdf = try runProcess("/usr/bin/mutool", ["show", Fixtures.pdf("named-dests.pdf"), "outline"]).stdout
        #expect(
            mupdf.contains("\"Dictionary destination\"\t#page=3") && mupdf.contains("\"GoTo a dictionary\"\t#page=2"),
            "\(mupdf)")
        // As poppler's pdfinfo lists the document's destinations.
        let listed = try runProcess("/usr/bin/pdfinfo", ["-dests", Fixtures.pdf("named-dests.pdf")]).stdout
        for (name, page) in [("First", 1), ("Second", 2), ("fifth", 5), ("fourth", 4), ("sixth", 6)] {
            #expect(
                listed.split(separator: "\n").contains {
                    $0.hasSuffix("\"\(name)\"") && $0.hasPrefix(String(format: "%4d", page))
                },
                "\(listed)")
        }
    }

    @Test func tocReadsTheStoredOutlineAndOlderLibrariesThePDF() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("outlined.pdf"))
        let stored = try box.ok("toc", "1", "--json").stdout
        let cached = try box.ok("path", "1").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.removeItem(atPath: cached)
        #expect(try box.ok("toc", "1", "--json").stdout == stored)
        let old = Sandbox()
        try FileManager.default.createDirectory(atPath: old.home, withIntermediateDirectories: true)
        try FileManager.default.copyItem(
            atPath: Fixtures.root + "/fixtures/db/v7.sqlite", toPath: old.home + "/library.sqlite")
        let failed = try old.fails("toc", "sample paper")
        #expect(failed.stderr.contains("not in the cache") || failed.stderr.contains("margin fetch"), "\(failed)")
        try old.ok("add", "-q", Fixtures.pdf("sample.pdf"))
        let none = try old.ok("toc", "sample paper")
        #expect(none.stderr.contains("has no outline"), "read from the PDF now in the cache: \(none)")
    }
}

/// What `add` stores of the corpus's real PDFs, read back through the CLI and held against
/// programs that aren't margin: outlines against MuPDF's, page labels against the /PageLabels
/// tree as qpdf reads it.
@Suite struct CorpusGuideTests {
    @Test(
        Prerequisite.needs(
            Fixtures.corpus != nil && ReferenceReaders.mutool != nil && ReferenceReaders.qpdf != nil,
            "needs ../shared/corpus, mutool and qpdf"))
    func storedOutlinesAndPageLabelsMatchMuPDFAndQpdf() throws {
        // The corpus PDFs with an outline or page labels.
        var chosen = [(file: String, outline: [(title: String, page: Int?, level: Int)], labels: [String]?)]()
        for file in ReferenceReaders.corpusFiles() {
            let pages = try runProcess("/usr/bin/qpdf", ["--show-npages", file]).stdout
            guard let count = Int(pages.trimmingCharacters(in: .whitespacesAndNewlines)) else { continue }
            let outline = try ReferenceReaders.mutoolOutline(file)
            let labels = try ReferenceReaders.qpdfPageLabels(file, pageCount: count)
            if !outline.isEmpty || labels != nil { chosen.append((file, outline, labels)) }
        }
        #expect(chosen.count >= 6, "the corpus has PDFs with outlines and labels")
        let box = Sandbox()
        var outlines = 0
        var labelled = 0
        for (index, entry) in chosen.enumerated() {
            try box.ok("add", "-q", entry.file)
            let id = String(index + 1)
            let toc = try #require(try box.ok("toc", id, "--json").json() as? [[String: Any]])
            #expect(toc.count == entry.outline.count, "\(entry.file)")
            for (stored, reference) in zip(toc, entry.outline) {
                #expect(stored.int("level") == reference.level, "\(entry.file): \(stored) vs \(reference)")
                if let page = reference.page, let found = stored.int("page") {
                    #expect(found == page, "\(entry.file): \(stored) vs \(reference)")
                }
                #expect(
                    ReferenceReaders.words(stored.string("title") ?? "") == ReferenceReaders.words(reference.title),
                    "\(entry.file)")
                if let page = stored.int("page"), let labels = entry.labels {
                    #expect(stored.string("pageLabel") == labels[page - 1], "\(entry.file): \(stored)")
                }
            }
            if !toc.isEmpty { outlines += 1 }
            // Every page's label, as search hits carry it: a bookmark on each of up to 40 pages.
            guard let labels = entry.labels else { continue }
            let pages = Array(Set(stride(from: 1, through: labels.count, by: max(1, labels.count / 40)))).sorted()
            for page in pages { try box.ok("bookmark", "add", "-q", id, String(page)) }
            let marks = try #require(try box.ok("bookmark", "list", id, "--json").json() as? [[String: Any]])
            #expect(marks.count == pages.count)
            for mark in marks {
                let page = try #require(mark.int("page"))
                // Labels that only repeat the page numbers are not stored, nor a page with an
                // empty label (null both).
                let plain = labels.enumerated().allSatisfy { $0.element == String($0.offset + 1) }
                let expected = plain || labels[page - 1].isEmpty ? nil : labels[page - 1]
                #expect(mark.string("pageLabel") == expected, "\(entry.file) page \(page)")
            }
            labelled += 1
        }
        #expect(outlines >= 5 && labelled >= 3, "outlines \(outlines), labelled \(labelled)")
    }
}

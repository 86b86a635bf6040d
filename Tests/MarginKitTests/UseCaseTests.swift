import Foundation
import MarginCore
import MarginKit
import Poppler
import TestSupport
import Testing

/// The use cases in process, over an in-memory store and real PDFs through poppler, with the
/// network closed. The binary's tests keep the command-line contract; these cover the library.
@Suite struct UseCaseTests {
    @Test func addSavesABookOnceAndReadsItsFacts() async throws {
        let test = try TestLibrary()
        var options = AddOptions()
        options.folder = "papers/"
        options.tags = ["classic", " notes ", "classic"]
        let first = try await test.add("sample.pdf", options: options)
        let book = try #require(first.first)
        #expect(book.book.title == "A Sample Paper" && book.book.pages == 3)
        #expect(book.book.folder == "papers" && book.tags == ["classic", "notes"], "folder and tags normalized")
        #expect(book.cached)
        // The same content again is the same book.
        let again = await test.library.add([Fixtures.pdf("sample.pdf")], options: AddOptions(), jobs: 1)
        #expect(again.first?.duplicate == true)
        #expect(try await test.library.allBooks().count == 1)
    }

    @Test func booksAreResolvedByIdHashPrefixAndFoldedTitle() async throws {
        let test = try TestLibrary()
        let books = try await test.add("sample.pdf", "second.pdf")
        let library = test.library
        let sample = try #require(books.first?.book)
        #expect(try await library.resolve("\(sample.id ?? 0)").sha256 == sample.sha256)
        #expect(try await library.resolve(String(sample.sha256.prefix(6))).id == sample.id)
        #expect(try await library.resolve("SAMPLE pâper").id == sample.id, "titles match folded: case and accents")
        await #expect(throws: MarginError.self) { try await library.resolve("no such title") }
        await #expect(throws: MarginError.self) { try await library.resolve("e") }  // both titles hold an "e"
    }

    @Test func searchFindsPagesAndSaysWhatItCouldNot() async throws {
        let test = try TestLibrary()
        try await test.add("sample.pdf", "second.pdf")
        let results = try await test.library.search("herons", options: SearchOptions())
        #expect(results.hits.map { "\($0.title):\($0.page ?? 0)" } == ["Field Notes:1"])
        var limited = SearchOptions()
        limited.limit = 1
        let fox = try await test.library.search("fox", options: limited)
        #expect(fox.hits.count == 1 && fox.more, "the limit cuts, and says so")
        await #expect(throws: MarginError.self) { try await test.library.search("\"", options: SearchOptions()) }
    }

    @Test func pagesPastTheLimitAreCountedUpToACap() async throws {
        let test = try TestLibrary()
        try await test.add("sample.pdf", "second.pdf")
        var all = SearchOptions()
        all.limit = 0
        let everything = try await test.library.search("the", options: all).hits.count
        try #require(everything >= 4, "a common word on most pages")
        var limited = SearchOptions()
        limited.limit = 1
        let exact = try await test.library.search("the", options: limited)
        #expect(exact.more && exact.moreIsExact && !exact.moreIsAtLeast)
        #expect(exact.moreCount == everything - 1, "counted in full under the cap")
        limited.countUpTo = 2
        let capped = try await test.library.search("the", options: limited)
        #expect(capped.hits.map(\.page) == exact.hits.map(\.page), "the cap changes the count, not the hits")
        #expect(capped.more && capped.moreIsAtLeast && !capped.moreIsExact)
        #expect(capped.moreCount == 2, "counted no further than the cap")
        limited.countUpTo = everything - 1
        let atTheCap = try await test.library.search("the", options: limited)
        #expect(atTheCap.moreIsAtLeast && atTheCap.moreCount == everything - 1)
        limited.countUpTo = everything
        #expect(try await test.library.search("the", options: limited).moreIsExact)
    }

    @Test func annotationsAreSavedEditedFoundAndRemoved() async throws {
        let test = try TestLibrary()
        let library = test.library
        let book = try #require(try await test.add("sample.pdf").first?.book)
        var request = HighlightRequest(text: "inverted index")
        request.note = "Kéy idea"
        let highlights = try await library.addHighlights(book, request)
        let highlight = try #require(highlights.first)
        #expect(highlight.page == 2 && !highlight.rects.isEmpty)
        let memo = try await library.addMemo(book, page: 1, text: "Read again")
        _ = try await library.addBookmark(book, page: 3, label: "end")
        var annotations = SearchOptions()
        annotations.annotations = true
        #expect(
            try await library.search("key IDEA", options: annotations).hits.map(\.kind) == ["highlight"],
            "found by its note")
        _ = try await library.editMemo(id: memo.id ?? 0, text: "Read twice")
        #expect(
            try await library.search("again", options: annotations).hits.isEmpty,
            "an edited memo is found by its new text only")
        #expect(try await library.search("twice", options: annotations).hits.count == 1)
        #expect(try await library.annotations(of: book).count == 3)
        _ = try await library.removeHighlight(id: highlight.id ?? 0)
        #expect(try await library.search("key", options: annotations).hits.isEmpty)
        await #expect(throws: MarginError.self) { try await library.removeHighlight(id: highlight.id ?? 0) }
    }

    @Test func aBackupRestoresIntoAnotherLibrary() async throws {
        let source = try TestLibrary()
        let book = try #require(try await source.add("sample.pdf").first?.book)
        _ = try await source.library.addHighlights(book, HighlightRequest(text: "inverted index"))
        _ = try await source.library.addMemo(book, page: nil, text: "On the whole book")
        let backup = try await source.library.backup([book])
        let target = try TestLibrary()
        try await target.add("sample.pdf")
        let dry = try await target.library.importBackup(backup, dryRun: true)
        #expect(try await target.library.highlights(of: nil).isEmpty, "a dry run changes nothing")
        let report = try await target.library.importBackup(backup, dryRun: false)
        #expect(report.highlights.added == dry.highlights.added && report.highlights.added == 1)
        #expect(try await target.library.memos(of: nil).map(\.text) == ["On the whole book"])
        let again = try await target.library.importBackup(backup, dryRun: false)
        #expect(again.highlights.unchanged == 1 && again.memos.unchanged == 1, "importing twice adds nothing")
    }

    /// Reading never fetches: with the cached file gone, reads say so, and the fail-closed
    /// downloader proves nothing reached for the network.
    @Test func readsNeverFetch() async throws {
        let test = try TestLibrary()
        let book = try #require(try await test.add("sample.pdf").first?.book)
        try FileManager.default.removeItem(atPath: try test.library.cachedFile(book))
        let output = test.folder.path + "/page.png"
        await #expect(throws: MarginError.self) {
            try await test.library.render(book, RenderRequest(page: 1), to: output, force: false)
        }
        await #expect(throws: MarginError.self) {
            try await test.library.exportPDF(book, to: test.folder.path + "/a.pdf", force: false)
        }
        // Indexed text needs no file.
        #expect(try await test.library.text(of: book, pages: [1]).first?.text.isEmpty == false)
        #expect(!FileManager.default.fileExists(atPath: output))
    }
}

/// Books, the cache and the library's own checks, in process.
@Suite struct BookUseCaseTests {
    @Test func editListAndRemove() async throws {
        let test = try TestLibrary()
        let library = test.library
        let books = try await test.add("sample.pdf", "second.pdf")
        let sample = try #require(books.first?.book)
        var changes = BookChanges()
        changes.title = "Renamed"
        changes.folder = "papers/ml/"
        changes.addTags = ["to-read"]
        let edited = try await library.edit(sample, changes)
        #expect(edited.book.title == "Renamed" && edited.book.folder == "papers/ml" && edited.tags == ["to-read"])
        #expect(try await library.list(BookFilter(folder: "papers")).map(\.book.title) == ["Renamed"])
        #expect(try await library.list(BookFilter(tag: "TO-READ")).count == 1, "tags match case-insensitively")
        // A book with annotations goes only when confirmed; then its files go too.
        _ = try await library.addMemo(edited.book, page: 1, text: "keep me?")
        await #expect(throws: MarginError.self) { try await library.remove([edited.book], confirmed: false) }
        #expect(try await library.allBooks().count == 2, "nothing was removed")
        let file = try library.cachedFile(edited.book)
        let report = try await library.remove([edited.book], confirmed: true)
        #expect(report.removed.map(\.memos) == [1])
        #expect(!FileManager.default.fileExists(atPath: file))
        #expect(try await library.allBooks().map(\.title) == ["Field Notes"])
    }

    /// A book added from a path is fetched again from that path: no network.
    @Test func theCacheRefetchesLocalSourcesAndVerifies() async throws {
        let test = try TestLibrary()
        let library = test.library
        let book = try #require(try await test.add("mixed.pdf").first?.book)
        let file = try library.cachedFile(book)
        let cleared = try await library.cacheClear(all: true)
        #expect(cleared.removed.count == 1 && !FileManager.default.fileExists(atPath: file))
        #expect(try await library.ensureCached(book) == file)
        #expect(FileManager.default.fileExists(atPath: file))
        // A damaged copy is noticed and replaced from the source.
        try Data("not the PDF".utf8).write(to: URL(fileURLWithPath: file))
        let verified = try await library.cacheVerify()
        #expect(verified.corrupt.count == 1 && verified.restored.count == 1, "\(verified)")
        #expect(
            FileManager.default.contents(atPath: file)
                == FileManager.default.contents(atPath: Fixtures.pdf("mixed.pdf")))
    }

    @Test func statusAndCheckSeeAHealthyLibrary() async throws {
        let test = try TestLibrary()
        try await test.add("sample.pdf", "second.pdf")
        let status = try await test.library.status()
        #expect(status.schema.pending.isEmpty && status.schema.version == status.schema.latest)
        let check = try await test.library.check()
        #expect(check.integrity == ["ok"] && check.missingFiles.isEmpty && check.unindexedBooks.isEmpty, "\(check)")
    }

    @Test func versionsTextAndReindex() async throws {
        let test = try TestLibrary()
        let library = test.library
        let book = try #require(try await test.add("sample.pdf").first?.book)
        #expect(try await library.versions(of: book).map(\.sha256) == [book.sha256])
        let text = try await library.text(of: book, pages: [2, 1])
        #expect(text.map(\.page) == [2, 1] && text[0].text.contains("inverted index"))
        await #expect(throws: MarginError.self) { try await library.text(of: book, pages: [4]) }
        let reindexed = try await library.reindex([book])
        #expect(reindexed.first?.indexedAt != nil)
        #expect(try await library.search("inverted", options: SearchOptions()).hits.map(\.page) == [2])
    }

    @Test func anEncryptedBookOpensWithItsStoredPassword() async throws {
        let test = try TestLibrary()
        var options = AddOptions()
        options.password = "secret"
        let book = try #require(try await test.add("encrypted.pdf", options: options).first?.book)
        #expect(
            try await test.library.search("herons", options: SearchOptions()).hits.map(\.page) == [1],
            "its text was read with the password")
        let output = test.folder.path + "/page.png"
        _ = try await test.library.render(book, RenderRequest(page: 1), to: output, force: false)
        #expect(FileManager.default.contents(atPath: output)?.starts(with: [0x89, 0x50, 0x4E, 0x47]) == true)
        await #expect(throws: MarginError.self) { try await test.library.setPassword(book, "wrong") }
    }
}

/// When a page's own text can be read (else OCR reads its image): a letter, and at most half
/// of what is not white space without a Unicode mapping.
@Suite struct TextLayerTests {
    @Test(arguments: [
        ("A Sample Paper on Marginalia", true),
        ("Ωμέγα 東京 ١٢٣ كتاب", true),
        ("", false),
        ("   \n\t ", false),
        ("12 34 — 56 (7)", false),
        ("\u{FFFD}\u{FFFD}\u{FFFD} a", false),
        ("\u{E001}\u{E002}\u{E003}\u{E004}", false),
        ("word \u{E001}", true),
        ("\u{0001}\u{0002}x", false),
    ])
    func usable(text: String, expected: Bool) {
        #expect(TextLayer.isUsable(text) == expected, "\(text.debugDescription)")
    }
}

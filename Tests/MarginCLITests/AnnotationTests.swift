import Foundation
import MarginCore
@_spi(Testing) import Poppler
import TestSupport
import Testing

@Suite struct AnnotationTests {
    func library() throws -> Sandbox {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"), Fixtures.pdf("mixed.pdf"), "--jobs", "1")
        return box
    }

    func json(_ box: Sandbox, _ arguments: String...) throws -> Any {
        let result = try box.margin.run(arguments + ["--json"])
        #expect(result.status == 0, "\(arguments): \(result)")
        return try result.json()
    }

    @Test func bookmarksByPageAndOutOfRange() throws {
        let box = try library()
        try box.ok("bookmark", "add", "sample", "3", "--label", "rendering")
        try box.ok("bookmark", "add", "sample", "1")
        let list = try #require(try json(box, "bookmark", "list", "sample") as? [[String: Any]])
        #expect(list.map { $0.int("page") } == [1, 3])
        #expect(list[1].string("label") == "rendering")
        #expect(list[0]["label"] is NSNull)
        #expect(list[0].string("uuid")?.count == 36)
        #expect(list[0].int("book") == 1)
        #expect(try box.fails("bookmark", "add", "sample", "4").stderr.contains("valid pages are 1-3"))
        let id = try #require(list[0].int("id"))
        try box.ok("bookmark", "rm", String(id))
        #expect(try box.fails("bookmark", "rm", String(id)).stderr.contains("no bookmark with id"))
        #expect((try json(box, "bookmark", "list") as? [Any])?.count == 1)
    }

    @Test func highlightStoresRectsTextAndContext() throws {
        let box = try library()
        let added = try #require(
            try json(
                box, "highlight", "add", "sample", "--text", "inverted index", "--occurrence", "1", "--color", "green",
                "--note", "key idea")
                as? [[String: Any]])
        let highlight = try #require(added.first)
        #expect(highlight.int("page") == 2, "the first match in the book, with its page")
        #expect(highlight.string("text") == "inverted index", "the exact text under the rects")
        #expect(highlight.string("color") == "#5fb236")
        #expect(highlight.string("note") == "key idea")
        #expect(highlight.string("prefix")?.hasSuffix("should be fast. An ") == true)
        #expect(highlight.string("suffix")?.hasPrefix(" maps each word") == true)
        let rects = try #require(highlight["rects"] as? [[Double]])
        #expect(rects.count == 1)
        let rect = rects[0]
        #expect(rect[0] > 72 && rect[2] > rect[0] && rect[3] > rect[1], "a real box in PDF points: \(rect)")
        #expect(rect[1] > 600 && rect[3] < 740, "near the top of the page (bottom-left origin): \(rect)")
        // The rect covers that text: poppler gives it back.
        let document = try Document(path: Fixtures.pdf("sample.pdf"))
        let under = try document.page(2).text(in: PDFRect(x0: rect[0], y0: rect[1], x1: rect[2], y1: rect[3]))
        #expect(under.trimmingCharacters(in: .whitespacesAndNewlines) == "inverted index")
    }

    @Test func highlightAcrossALineBreakOccurrencesAndAll() throws {
        let box = try library()
        let phrase = try #require(
            try json(box, "highlight", "add", "mixed", "--text", "quick brown fox", "--occurrence", "1")
                as? [[String: Any]])
        #expect(phrase.first?.int("page") == 1)
        #expect((phrase.first?["rects"] as? [[Double]])?.count == 2, "one rect per line")
        #expect(
            phrase.first?.string("text") == "The quick brown fox" || phrase.first?.string("text") == "quick brown fox")
        let all = try #require(
            try json(box, "highlight", "add", "sample", "--text", "quick brown", "--all") as? [[String: Any]])
        #expect(all.map { $0.int("page") } == [1, 2])
        let second = try #require(
            try json(box, "highlight", "add", "sample", "--text", "the", "--page", "1", "--occurrence", "2")
                as? [[String: Any]])
        #expect(second.count == 1)
        let missing = try box.fails("highlight", "add", "sample", "--text", "Zebra", "--page", "1")
        #expect(missing.stderr.contains("not found on page 1; it occurs on page 3"))
        let nowhere = try box.fails("highlight", "add", "sample", "--text", "unicorn", "--occurrence", "1")
        #expect(nowhere.stderr.contains("does not occur"))
        try box.fails("highlight", "add", "sample", "--text", "fox", "--occurrence", "1", "--color", "chartreuse-ish")
        #expect(
            try box.margin.run(["highlight", "add", "sample", "--text", "fox", "--all", "--occurrence", "1"]).status
                == 64)
    }

    @Test func highlightEditListRemoveAndReadingOrder() throws {
        let box = try library()
        try box.ok("highlight", "add", "sample", "--text", "lazy dog", "--page", "1")
        try box.ok("highlight", "add", "sample", "--text", "Readers have always", "--page", "1")
        try box.ok("memo", "add", "sample", "--page", "1", "Page one memo")
        try box.ok("memo", "add", "sample", "A memo on the whole book")
        try box.ok("bookmark", "add", "sample", "1")
        let items = try #require(try json(box, "annotations", "sample") as? [[String: Any]])
        #expect(items.map { $0.string("kind") } == ["bookmark", "highlight", "highlight", "memo", "memo"])
        #expect(items[1].string("text") == "Readers have always", "top of the page first")
        #expect(items[4]["page"] is NSNull)
        let id = try #require(items[2].int("id"))
        let edited = try #require(
            try json(box, "highlight", "edit", String(id), "--note", "classic", "--color", "#FF0000") as? [String: Any])
        #expect(edited.string("note") == "classic")
        #expect(edited.string("color") == "#ff0000")
        #expect(edited.string("updatedAt") != edited.string("createdAt"))
        try box.ok("highlight", "rm", String(id))
        #expect((try json(box, "highlight", "list") as? [Any])?.count == 1)
    }

    @Test func memosFromStdinEditAndSearch() throws {
        let box = try library()
        let result = try box.margin.run(
            ["memo", "add", "sample", "--page", "2", "-", "--json"], stdin: "Indexes are\nwonderful\n")
        #expect(result.status == 0, "\(result)")
        let memo = try #require(try result.json() as? [String: Any])
        #expect(memo.string("text") == "Indexes are\nwonderful")
        let id = try #require(memo.int("id"))
        try box.ok("memo", "edit", String(id), "Indexes are marvellous")
        try box.ok(
            "highlight", "add", "mixed", "--text", "pangram", "--occurrence", "1", "--note",
            "a sentence with every letter")
        let hits = try #require(try json(box, "search", "--annotations", "MARVELLOUS") as? [[String: Any]])
        #expect(hits.count == 1)
        #expect(hits.first?.string("kind") == "memo")
        #expect(hits.first?.int("page") == 2)
        let noteHits = try #require(try json(box, "search", "--annotations", "every letter") as? [[String: Any]])
        #expect(noteHits.first?.string("kind") == "highlight")
        #expect(noteHits.first?.string("title") == "Mixed Bag")
        try box.fails("memo", "add", "sample", "--page", "9", "x")
        try box.ok("memo", "rm", String(id))
        #expect((try json(box, "search", "--annotations", "marvellous") as? [Any])?.isEmpty == true)
    }

    /// The library is plain SQLite: the `sqlite3` shell can write a memo into it (no function of
    /// Margin's is needed by its triggers), and Margin lists and searches what it wrote.
    @Test func theSQLiteShellCanWriteAMemo() throws {
        let box = try library()
        let database = box.home + "/library.sqlite"
        let insert = """
            INSERT INTO memo (uuid, bookId, page, text, createdAt, updatedAt) \
            VALUES (randomblob(16), 1, 2, 'Written from the shell about zebras', '2026-01-02 03:04:05.000', '2026-01-02 03:04:05.000')
            """
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/sqlite3")
        process.arguments = [database, insert]
        let errors = Pipe()
        process.standardError = errors
        try process.start()
        process.waitUntilExit()
        let message = String(decoding: errors.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 0, "sqlite3 could not write a memo: \(message)")
        let memos = try #require(try json(box, "memo", "list", "sample") as? [[String: Any]])
        #expect(memos.map { $0.string("text") } == ["Written from the shell about zebras"])
        let hits = try #require(try json(box, "search", "--annotations", "ZEBRAS") as? [[String: Any]])
        #expect(hits.map { $0.string("kind") } == ["memo"], "found through the index the shell's insert filled")
        try box.ok("db", "check")
    }

    @Test func annotatingAndRenderingUpdateRecent() throws {
        let box = try library()
        try box.ok("bookmark", "add", "mixed", "1")
        let recent = try #require(try json(box, "recent") as? [[String: Any]])
        #expect(recent.first?.string("title") == "Mixed Bag")
    }

    @Test func removingABookWithAnnotationsNeedsYes() throws {
        let box = try library()
        try box.ok("highlight", "add", "sample", "--text", "fox", "--occurrence", "1")
        let refused = try box.fails("rm", "sample")
        #expect(refused.stderr.contains("1 highlight, 0 memos and 0 bookmarks"))
        #expect(refused.stderr.contains("--yes"))
        #expect(try box.books().count == 2)
        let removed = try box.ok("rm", "sample", "--yes")
        #expect(removed.stdout.contains("with 1 highlight, 0 memos, 0 bookmarks"))
        #expect((try json(box, "highlight", "list") as? [Any])?.isEmpty == true, "annotations go with their book")
        try box.ok("rm", "mixed")
    }

    @Test func renderDrawsHighlightsAndBookmarks() throws {
        let box = try library()
        let added = try #require(
            try json(
                box, "highlight", "add", "sample", "--text", "Readers have always", "--occurrence", "1", "--color",
                "blue")
                as? [[String: Any]])
        let rect = try #require((added.first?["rects"] as? [[Double]])?.first)
        try box.ok("bookmark", "add", "sample", "1")
        let plain = box.folder.path + "/plain.png"
        let marked = box.folder.path + "/marked.png"
        try box.ok("render", "sample", "--page", "1", "--dpi", "72", "-o", plain)
        try box.ok("render", "sample", "--page", "1", "--dpi", "72", "--annotations", "-o", marked)
        let a = try PNGImage(path: plain)
        let b = try PNGImage(path: marked)
        // Inside the highlight's rect the page turns blue; without --annotations it doesn't.
        func bluePixels(_ image: PNGImage) -> Int {
            var count = 0
            for y in (image.height - Int(rect[3]))..<(image.height - Int(rect[1])) {
                for x in Int(rect[0])..<Int(rect[2]) {
                    let p = image.pixel(x: x, y: y)
                    if p.blue > p.red + 40 { count += 1 }
                }
            }
            return count
        }
        let area = Int(rect[2] - rect[0]) * Int(rect[3] - rect[1])
        #expect(bluePixels(a) == 0)
        #expect(bluePixels(b) * 2 > area, "most of the highlight is blue: \(bluePixels(b)) of \(area)")
        let ribbon = b.pixel(x: b.width - 20, y: 10)
        #expect(ribbon.red > 150 && ribbon.green < 80, "bookmark ribbon: \(ribbon)")
    }
}

import Foundation
import TestSupport
import Testing

/// KOReader sidecars made by `fixtures/make-koreader.py`, taken in by `margin import koreader`.
enum KOReaderFixture {
    static func make() throws -> String {
        let folder = NSTemporaryDirectory() + "margin-koreader-\(getpid())/" + UUID().uuidString
        let made = try runProcess("/usr/bin/env", ["python3", Fixtures.root + "/fixtures/make-koreader.py", folder])
        guard made.status == 0 else { throw ZoteroFixture.FixtureError.failed(made.stderr) }
        return folder
    }
}

@Suite struct KOReaderImportTests {
    func counts(_ report: [String: Any], _ kind: String) -> [Int] {
        let counts = report[kind] as? [String: Any] ?? [:]
        return ["added", "updated", "unchanged", "conflicts"].map { counts[$0] as? Int ?? -1 }
    }

    /// A library whose sample PDF was added under another name: only KOReader's checksum ties
    /// the sidecar to it.
    func library() throws -> Sandbox {
        let box = Sandbox()
        let renamed = box.folder.path + "/renamed-copy.pdf"
        try FileManager.default.copyItem(atPath: Fixtures.pdf("sample.pdf"), toPath: renamed)
        try box.ok("add", renamed, Fixtures.pdf("second.pdf"))
        try box.ok("edit", "1", "--title", "Not The Title KOReader Knows")
        return box
    }

    @Test func highlightsAndBookmarksComeInOnTheirBooks() throws {
        let sidecars = try KOReaderFixture.make()
        let box = try library()
        let dry = try #require(
            try box.ok("import", "koreader", sidecars, "--dry-run", "--json").json() as? [String: Any])
        #expect(counts(dry, "highlights") == [3, 0, 0, 0])
        #expect(counts(dry, "bookmarks") == [2, 0, 0, 0])
        #expect((try box.ok("highlight", "list", "--json").json() as? [Any])?.isEmpty == true, "a dry run adds nothing")
        let report = try #require(try box.ok("import", "koreader", sidecars, "--json").json() as? [String: Any])
        #expect(counts(report, "highlights") == [3, 0, 0, 0])
        #expect(counts(report, "bookmarks") == [2, 0, 0, 0])
        let skipped = try #require(report["skipped"] as? [[String: String]])
        #expect(skipped.count == 1 && skipped.first?["what"]?.hasSuffix("stranger.sdr/metadata.pdf.lua") == true)

        let highlights = try #require(try box.ok("highlight", "list", "1", "--json").json() as? [[String: Any]])
        let fox = try #require(highlights.first { $0["page"] as? Int == 1 })
        #expect(fox["text"] as? String == "The quick brown fox jumps over the lazy dog.")
        #expect(fox["note"] as? String == "fox note\nwith a second line")
        #expect(fox["color"] as? String == "#ff6666", "KOReader's red")
        // KOReader's local time.
        let formatter = DateFormatter()
        formatter.dateFormat = "yyyy-MM-dd HH:mm:ss"
        formatter.timeZone = TimeZone.current
        let created = try #require(formatter.date(from: "2024-03-05 21:14:07"))
        #expect(parseISO(fox["createdAt"] as? String) == created)
        // Its page boxes, from the top left, are the words' rects: as margin places them itself.
        let other = Sandbox()
        try other.ok("add", Fixtures.pdf("sample.pdf"))
        try other.ok("highlight", "add", "1", "--text", "The quick brown fox jumps over the lazy dog.", "--page", "1")
        let mine = try #require(
            (try other.ok("highlight", "list", "--json").json() as? [[String: Any]])?.first?["rects"] as? [[Double]])
        let kept = try #require(fox["rects"] as? [[Double]])
        let union = kept.reduce([Double.infinity, .infinity, -.infinity, -.infinity]) {
            [min($0[0], $1[0]), min($0[1], $1[1]), max($0[2], $1[2]), max($0[3], $1[3])]
        }
        for (a, b) in zip(union, mine[0]) { #expect(abs(a - b) <= 1.5, "\(union) vs \(mine)") }
        // No boxes kept: the words are found on the page.
        let index = try #require(highlights.first { $0["page"] as? Int == 2 })
        #expect(index["text"] as? String == "An inverted index maps each word")
        #expect((index["rects"] as? [[Double]])?.isEmpty == false)
        let bookmarks = try #require(try box.ok("bookmark", "list", "--json").json() as? [[String: Any]])
        #expect(
            bookmarks.contains {
                $0["book"] as? Int == 1 && $0["page"] as? Int == 3 && $0["label"] as? String == "come back here"
            })
        #expect(bookmarks.contains { $0["book"] as? Int == 2 && $0["label"] as? String == "Appendix to check" })
        // The older sidecar: its words in `notes`, its note in `text`; found by the file's name.
        let herons = try #require(
            (try box.ok("highlight", "list", "2", "--json").json() as? [[String: Any]])?.first)
        #expect(herons["text"] as? String == "Herons were seen near the northern bank.")
        #expect(herons["note"] as? String == "seen twice")

        let again = try #require(try box.ok("import", "koreader", sidecars, "--json").json() as? [String: Any])
        #expect(again["added"] as? Int == 0 && again["updated"] as? Int == 0)
        #expect(counts(again, "highlights") == [0, 0, 3, 0])
    }

    /// A sidecar is data: one with code in it (a call, an operator, nesting without end) is
    /// refused before anything is written, and the code never runs.
    @Test func aSidecarWithCodeIsRefusedAndNeverRun() throws {
        let sidecars = try KOReaderFixture.make()
        let box = try library()
        let before = try box.snapshot()
        for (file, says) in [
            ("execute.lua", "'os' is code, not data"), ("inside.lua", "'io' is code, not data"),
            ("concat.lua", "',' or '}' expected"), ("deep.lua", "nested deeper than 64"),
        ] {
            // With a good sidecar beside it: nothing of either is imported.
            let refused = try box.fails(
                "import", "koreader", sidecars + "/sample.sdr/metadata.pdf.lua", sidecars + "/hostile/" + file)
            #expect(refused.stderr.contains(says) && refused.stderr.contains("nothing was imported"), "\(refused)")
        }
        #expect(!FileManager.default.fileExists(atPath: sidecars + "/pwned"))
        #expect(try box.snapshot() == before)
        #expect(try box.fails("import", "koreader", sidecars + "/none").stderr.contains("no such file"))
        let empty = TemporaryFolder()
        #expect(try box.fails("import", "koreader", empty.path).stderr.contains("no KOReader sidecar"))
    }

    func parseISO(_ text: String?) -> Date? {
        guard let text else { return nil }
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.date(from: text)
    }
}

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

    @Test func tocOfABookWhosePDFIsGoneSaysHowToGetIt() throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("outlined.pdf"))
        let cached = try box.ok("path", "1").stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        try FileManager.default.removeItem(atPath: cached)
        let failed = try box.fails("toc", "1")
        #expect(failed.stderr.contains("not in the cache") || failed.stderr.contains("margin fetch"), "\(failed)")
    }
}

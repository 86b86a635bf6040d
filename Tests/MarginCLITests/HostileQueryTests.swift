import Foundation
import TestSupport
import Testing

/// Input a hostile page or script could send through the CLI or the server: queries built to
/// blow the search up, NULs that would cut stored text, numbers that poppler can't draw.
@Suite struct HostileQueryTests {
    @Test func aRepeatedWordCostsWhatOneDoesAndAQueryHasLimits() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf"))
        let once = try box.ok("search", "index", "--json").stdout
        // 160 repetitions, in any case: the same hits as one (before: minutes and gigabytes).
        let repeated = Array(repeating: "index InDeX", count: 80).joined(separator: " ")
        #expect(try box.ok("search", repeated, "--json").stdout == once)
        #expect(try box.ok("search", "\"inverted index\" \"inverted index\" index", "--json").json() is [Any])
        // Past the limits: one clear error.
        let words = (1...33).map { "w\($0)" }.joined(separator: " ")
        let tooMany = try box.fails("search", words)
        #expect(tooMany.stderr.contains("at most 32 different words (this one has 33)"), "\(tooMany)")
        let phrase = try box.fails("search", "\"" + words + "\"")
        #expect(phrase.stderr.contains("at most 32"), "\(phrase)")
        let long = try box.fails("search", String(repeating: "a", count: 1_001))
        #expect(long.stderr.contains("at most 1000 characters"), "\(long)")
        let regex = try box.fails("search", "--regex", String(repeating: "(a)", count: 400))
        #expect(regex.stderr.contains("at most 1000 characters"), "\(regex)")
        #expect(try box.fails("search", "--annotations", words).stderr.contains("at most 32"))
    }

    /// (Command-line arguments can't hold a NUL; the API's are tested in MarginServeTests.)
    @Test func aBackupHoldingANULIsRefusedWhole() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let backup = box.folder.path + "/backup.json"
        try box.ok("memo", "add", "1", "clean")
        try box.ok("export", "--all", "--format", "json", "-o", backup)
        let text = try String(contentsOfFile: backup, encoding: .utf8)
        let poisoned = box.folder.path + "/poisoned.json"
        try text.replacingOccurrences(of: "\"clean\"", with: "\"cle\\u0000an\"").write(
            toFile: poisoned, atomically: true, encoding: .utf8)
        let other = Sandbox()
        try other.ok("add", Fixtures.pdf("sample.pdf"))
        let refused = try other.fails("import", poisoned)
        #expect(refused.stderr.contains("NUL"), "\(refused)")
        #expect((try other.ok("memo", "list", "--json").json() as? [Any])?.isEmpty == true)
    }

    @Test func numbersOutOfRangeSayWhichOptionAndWhy() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let negative = try box.fails("render", "1", "--page", "1", "--dpi", "-5")
        #expect(negative.stderr.contains("error: --dpi must be at least 1, not -5"), "\(negative)")
        // Each option's own rule, as its command states it: --limit 0 is every hit (or book),
        // so a search's or a list's limit takes 0, recent's not.
        for (arguments, said) in [
            (["search", "sample", "--limit", "-1"], "--limit must be 0 (all) or more"),
            (["list", "--limit", "-2"], "--limit must be 0 or more"),
            (["list", "--offset", "-2"], "--offset must be 0 or more"),
            (["recent", "--limit", "-1"], "--limit must be at least 1"),
        ] {
            let refused = try box.fails(arguments)
            #expect(refused.stderrLines.first == "error: " + said, "\(arguments): \(refused.stderr)")
            #expect(refused.stderrLines.count(where: { $0.hasPrefix("error:") }) == 1, "\(refused.stderr)")
        }
        // An option no validation bounds: the usual least.
        let page = try box.fails("render", "1", "--page", "-2")
        #expect(page.stderrLines == ["error: --page takes a number of at least 1, not -2"], "\(page.stderr)")
        let tiny = try box.fails("render", "1", "--page", "1", "--dpi", "0.0000001", "-o", box.folder.path + "/p.png")
        #expect(tiny.stderr.contains("--dpi must be at least 1"), "\(tiny)")
        let dash = try box.fails("search", "-alpha")
        #expect(dash.stderr.contains("margin search -- -alpha"), "\(dash)")
        #expect(dash.stdout.isEmpty, "no help printed")
        try box.ok("search", "--", "-alpha")
        let device = try box.fails("add", "/dev/zero", "--max-size", "1MB")
        #expect(device.stderr.contains("more than that was read") && !device.stderr.contains("(0 bytes)"), "\(device)")
    }
}

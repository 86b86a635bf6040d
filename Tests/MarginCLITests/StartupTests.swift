import Foundation
import TestSupport
import Testing

/// poppler-glib (with cairo, GLib and their ~50 libraries) is loaded when a command first opens a
/// PDF, not when margin starts. Checked with the dynamic loader's own report (LD_DEBUG=files
/// lists every library it loads), not with timings.
@Suite struct StartupTests {
    func loadedLibraries(_ box: Sandbox, _ arguments: [String]) throws -> (RunResult, [String]) {
        let result = try box.margin.run(arguments, environment: ["LD_DEBUG": "files"])
        let loaded = result.stderrLines.compactMap { line -> String? in
            guard let range = line.range(of: "file=") else { return nil }
            return String(line[range.upperBound...].prefix { $0 != " " && $0 != ";" })
        }
        return (result, loaded)
    }

    @Test func commandsThatReadNoPDFDoNotLoadPoppler() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        for arguments in [["--version"], ["list"], ["list", "--json"], ["search", "inverted"], ["show", "1"]] {
            let (result, loaded) = try loadedLibraries(box, arguments)
            #expect(result.status == 0, "\(arguments): \(result.stdout)")
            #expect(!loaded.isEmpty, "the loader reports what it loads (LD_DEBUG)")
            #expect(
                !loaded.contains { $0.contains("poppler") || $0.contains("cairo") || $0.contains("glib") },
                "\(arguments) loaded \(loaded.filter { $0.contains("poppler") || $0.contains("cairo") })")
        }
        // A command that reads the PDF loads it, and works.
        let (rendered, loaded) = try loadedLibraries(
            box, ["render", "1", "--page", "1", "-o", box.folder.path + "/p.png"])
        #expect(rendered.status == 0, "\(rendered)")
        #expect(loaded.contains { $0.hasPrefix("libpoppler-glib.so") }, "\(loaded)")
        #expect(FileManager.default.fileExists(atPath: box.folder.path + "/p.png"))
    }
}

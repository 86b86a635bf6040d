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

    /// `margin` runs the commands that need no network, team library or server itself, answers
    /// help for all, and hands every other command to margin-full (beside it) before doing
    /// anything: alone, it says so in one line and the library is as before.
    @Test func otherCommandsAreHandedToMarginFull() throws {
        let box = Sandbox()
        let folder = box.folder.path + "/bin"
        try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: MarginRunner.binary, toPath: folder + "/margin")
        var environment = ProcessInfo.processInfo.environment
        environment["MARGIN_HOME"] = box.folder.path + "/library"
        func alone(_ arguments: String...) throws -> RunResult {
            try runProcess(folder + "/margin", arguments, environment: environment)
        }
        #expect(try alone("list").status == 0)
        let help = try alone("serve", "--help")
        #expect(help.status == 0 && help.stdout.contains("OVERVIEW"), "\(help)")
        for arguments in [
            ["add", Fixtures.pdf("sample.pdf")], ["--library", "postgres://me@127.0.0.1:1/team", "list"],
        ] {
            let handed = try runProcess(folder + "/margin", arguments, environment: environment)
            #expect(handed.status != 0)
            #expect(handed.stderrLines.count == 1, "\(handed.stderr)")
            #expect(handed.stderr.hasPrefix("error: this command runs in margin-full"), "\(handed.stderr)")
        }
        #expect(try alone("list", "--json").stdout.filter { !$0.isWhitespace } == "[]", "nothing was added")
        // Beside margin-full (as built and installed), the same add works.
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        // margin carries none of the network, PostgreSQL or server code.
        let thin = try Data(contentsOf: URL(fileURLWithPath: MarginRunner.binary))
        let full = try Data(
            contentsOf: URL(
                fileURLWithPath: (MarginRunner.binary as NSString).deletingLastPathComponent + "/margin-full"))
        for module in ["AsyncHTTPClient", "PostgresNIO", "Hummingbird"] {
            #expect(thin.range(of: Data(module.utf8)) == nil, "margin holds \(module)")
            #expect(full.range(of: Data(module.utf8)) != nil, "margin-full lacks \(module)")
        }
    }
}

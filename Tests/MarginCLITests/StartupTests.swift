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

    /// A command without subcommands is parsed as the root of a tree of its own (ArgumentParser
    /// would otherwise build its arguments twice more while parsing `margin`); what users see
    /// of it is still that of `margin COMMAND`: usage lines, help, errors, and the command run.
    @Test func commandsParsedOnTheirOwnReadAsCommandsOfMargin() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        for (arguments, usage) in [
            (["search"], "Usage: margin search "), (["bookmark", "add"], "Usage: margin bookmark add <book> "),
            (["list", "--limit", "x"], "Usage: margin list "), (["show", "1", "--frobnicate"], "Usage: margin show "),
        ] {
            let result = try box.margin.run(arguments)
            #expect(result.status == 64, "\(arguments): \(result)")
            #expect(result.stderrLines.first?.hasPrefix("error: ") == true, "\(arguments): \(result.stderr)")
            #expect(result.stderr.contains(usage), "\(arguments): \(result.stderr)")
            #expect(!result.stderr.contains("margin margin"), "\(arguments): \(result.stderr)")
        }
        for arguments in [["search", "--help"], ["help", "search"], ["bookmark", "add", "--help"]] {
            let help = try box.margin.run(arguments)
            #expect(help.status == 0, "\(arguments): \(help)")
            #expect(
                help.stdout.contains(
                    "USAGE: margin \(arguments.filter { $0 != "help" && $0 != "--help" }.joined(separator: " ")) "))
            #expect(!help.stdout.contains("margin margin"), "\(arguments): \(help.stdout)")
        }
        let hits = try box.margin.run(["search", "inverted", "--limit", "1", "--json"])
        #expect(hits.status == 0, "\(hits)")
        #expect(hits.stdout.contains("\"page\""), "\(hits.stdout)")
        let version = try box.margin.run(["search", "--version"])
        #expect(version.status == 0 && !version.stdout.isEmpty, "answered as 'margin --version' is: \(version)")
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

/// `make install` (scripts/install.sh): executables stripped and position-independent, their
/// debug information beside them, found through their debug links; the completions written.
@Suite struct InstallTests {
    @Test(Prerequisite.needs(ReferenceReaders.readelf != nil, "needs readelf (binutils; make test installs it)"))
    func installedExecutablesAreStrippedWithTheirDebugInformationBeside() throws {
        let folder = TemporaryFolder()
        let built = (MarginRunner.binary as NSString).deletingLastPathComponent
        let result = try runProcess(
            "/usr/bin/env",
            ["DESTDIR=" + folder.path, "BIN_DIR=" + built, Fixtures.root + "/scripts/install.sh"])
        #expect(result.status == 0, "\(result.stderr)")
        for exe in ["margin", "margin-full"] {
            let installed = folder.path + "/usr/local/bin/" + exe
            let sections = try runProcess("/usr/bin/readelf", ["-S", "-W", installed]).stdout
            #expect(!sections.contains(".debug_info") && sections.contains(".gnu_debuglink"), "\(exe)")
            let debug = folder.path + "/usr/lib/debug/usr/local/bin/" + exe + ".debug"
            #expect(try runProcess("/usr/bin/readelf", ["-S", "-W", debug]).stdout.contains(".debug_info"), "\(exe)")
            let header = try runProcess("/usr/bin/readelf", ["-h", installed]).stdout
            #expect(header.contains("DYN (Position-Independent Executable file)"), "\(exe): \(header)")
            let size = try FileManager.default.attributesOfItem(atPath: installed)[.size] as? Int ?? 0
            let original = try FileManager.default.attributesOfItem(atPath: built + "/" + exe)[.size] as? Int ?? 0
            #expect(size < original, "\(exe): \(size) of \(original) bytes")
        }
        let version = try runProcess(folder.path + "/usr/local/bin/margin", ["--version"])
        #expect(version.status == 0 && !version.stdout.isEmpty)
        let completion = try String(
            contentsOfFile: folder.path + "/usr/share/bash-completion/completions/margin", encoding: .utf8)
        #expect(completion.contains("_margin"))
    }
}

/// Each start-up trick can be turned off (`MARGIN_PLAIN`, for the bench to measure it), and
/// margin answers the same without it.
@Suite struct StartupTrickSwitchTests {
    @Test(arguments: ["one-thread", "lazy-poppler", "guide-cache", "all"])
    func eachTrickOffAnswersTheSame(trick: String) throws {
        let box = Sandbox()
        try box.ok("add", "-q", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf"), Fixtures.pdf("outlined.pdf"))
        try box.ok("highlight", "add", "3", "--text", "What this book covers")
        for arguments in [
            ["list"], ["search", "quick brown", "--json"], ["text", "1", "--pages", "2"], ["--version"],
            ["search", "book", "--json"], ["toc", "3", "--json"], ["highlight", "list", "--json"],
        ] {
            let usual = try box.ok(arguments)
            let plain = try box.margin.run(arguments, environment: ["MARGIN_PLAIN": trick])
            #expect(plain.status == 0 && plain.stdout == usual.stdout, "\(trick) \(arguments): \(plain)")
        }
        let failing = try box.margin.run(["show", "99"], environment: ["MARGIN_PLAIN": trick])
        #expect(failing.status != 0 && failing.stderr.hasPrefix("error: no book matches '99'"), "\(failing)")
    }
}

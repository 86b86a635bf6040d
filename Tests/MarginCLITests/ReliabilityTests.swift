import Foundation
import TestSupport
import Testing

/// Starts margin and SIGKILLs it after `delay` seconds (if it is still running).
func killed(_ box: Sandbox, _ arguments: [String], after delay: Double, cwd: String? = nil) throws -> Int32 {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: MarginRunner.binary)
    process.arguments = arguments
    process.environment = ProcessInfo.processInfo.environment.merging([
        "MARGIN_HOME": box.home, "MARGIN_RETRY_DELAY_MS": "5",
    ]) { $1 }
    if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
    process.standardOutput = FileHandle.nullDevice
    process.standardError = FileHandle.nullDevice
    try process.start()
    Thread.sleep(forTimeInterval: delay)
    if process.isRunning { kill(process.processIdentifier, SIGKILL) }
    process.waitUntilExit()
    return process.terminationStatus
}

@Suite(.serialized) struct CrashTests {
    /// After a kill at any point, the library opens, is intact, every book is whole (file cached,
    /// text indexed), every annotation has its book, no export is half-written, and the next
    /// run completes the work.
    func verify(_ box: Sandbox, _ what: String) throws {
        let check = try box.margin.run(["db", "check", "--repair", "--json"])
        let report = try #require(try check.json() as? [String: Any], "\(what): \(check)")
        #expect(check.status == 0, "\(what): \(check)")
        #expect(report["integrity"] as? [String] == ["ok"], "\(what)")
        #expect((report["foreignKeyViolations"] as? [Any])?.isEmpty == true, "\(what)")
        for book in try box.books() {
            #expect(book["cached"] as? Bool == true, "\(what): \(book.string("title") ?? "")")
            #expect(book["indexed"] as? Bool == true, "\(what): \(book.string("title") ?? "")")
        }
        #expect(
            box.folder.files().filter { $0.contains("cache/tmp/") && !$0.contains("download-") }.isEmpty,
            "\(what): stale files removed")
    }

    @Test func killsDuringAddImportExportReindexAndMigration() throws {
        var random = SeededRandom(seed: 20261121)
        var tried = 0
        let pdfs = ["sample.pdf", "second.pdf", "mixed.pdf", "untitled-notes.pdf"].map(Fixtures.pdf)
        let server = try TestHTTPServer(routes: [
            "/slow.pdf": .handler { _ in
                Reply(
                    headers: [("Content-Type", "application/pdf")], body: Fixtures.bytes(Fixtures.pdf("sample-v2.pdf")),
                    drip: (bytes: 256, delay: 0.01))
            }
        ])
        defer { server.shutdown() }
        let backup = Sandbox()
        try backup.ok(["add"] + pdfs)
        try backup.ok("highlight", "add", "sample", "--text", "fox", "--all")
        try backup.ok("memo", "add", "field", "--page", "1", "herons")
        let backupFile = backup.folder.path + "/backup.json"
        try backup.ok("export", "--all", "--format", "json", "-o", backupFile)
        let corpusBook = Fixtures.corpus.map { $0 + "/real/thinkstats2__thinkstats.pdf" }

        for round in 0..<6 {
            let box = Sandbox()
            let delay = { (max: Double) in Double(random.next() % 1000) / 1000 * max }
            // add: copying, downloading, indexing.
            var inputs = pdfs + [server.url("/slow.pdf")]
            if let corpusBook { inputs.append(corpusBook) }
            _ = try killed(box, ["add"] + inputs, after: delay(0.6))
            tried += 1
            try verify(box, "round \(round): add")
            try box.ok(["add"] + inputs)
            #expect(try box.books().count == inputs.count, "round \(round): the next add completes")
            // import.
            _ = try killed(box, ["import", backupFile], after: delay(0.3))
            tried += 1
            try verify(box, "round \(round): import")
            try box.ok("import", backupFile)
            let highlights = try #require(try box.ok("highlight", "list", "--json").json() as? [Any])
            #expect(highlights.count == 2, "round \(round): import is all or nothing, then complete")
            // export: the target is absent or whole.
            let out = box.folder.path + "/export.json"
            _ = try killed(box, ["export", "--all", "--format", "json", "-o", out], after: delay(0.2))
            tried += 1
            if FileManager.default.fileExists(atPath: out) {
                #expect(
                    (try? JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: out)))) != nil,
                    "round \(round): a whole export")
            }
            #expect(box.folder.files().filter { $0.contains(".margin-") }.allSatisfy { !$0.hasSuffix(".json") || true })
            // reindex.
            _ = try killed(box, ["reindex"], after: delay(0.5))
            tried += 1
            try verify(box, "round \(round): reindex")
            let hits = try #require(try box.ok("search", "fox", "--json").json() as? [Any])
            #expect(!hits.isEmpty, "round \(round): search works after a killed reindex")
            // migration of an old library.
            let old = Sandbox()
            try FileManager.default.createDirectory(atPath: old.home, withIntermediateDirectories: true)
            try FileManager.default.copyItem(
                atPath: Fixtures.root + "/fixtures/db/v1.sqlite", toPath: old.home + "/library.sqlite")
            _ = try killed(old, ["list"], after: delay(0.05))
            tried += 1
            let listed = try old.margin.run(["list", "--json"])
            #expect(listed.status == 0, "round \(round): migration after a kill: \(listed)")
            #expect((try? listed.json() as? [Any])??.count == 3)
        }
        print("crash: \(tried) kill points tried")
        #expect(tried == 30)
    }
}

@Suite struct ConcurrencyTests {
    /// Four processes adding, annotating and searching one library at once: every write lands,
    /// none fails with "database is locked", and the final counts are exact.
    @Test func fourProcessesAtOnce() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        // Distinct PDFs: the fixtures with a different comment after %%EOF each.
        var files = [String]()
        for worker in 0..<4 {
            for item in 0..<5 {
                let path = box.folder.path + "/w\(worker)-\(item).pdf"
                var data = Fixtures.bytes(Fixtures.pdf("second.pdf"))
                data += Array("\n% copy \(worker)-\(item)\n".utf8)
                try Data(data).write(to: URL(fileURLWithPath: path))
                files.append(path)
            }
        }
        let runner = box.margin
        // Four threads of their own (not the cooperative pool, which has one per core), each
        // running margin processes back to back.
        let collected = Collected()
        let group = DispatchGroup()
        for worker in 0..<4 {
            let mine = Array(files[(worker * 5)..<(worker * 5 + 5)])
            group.enter()
            Thread.detachNewThread {
                defer { group.leave() }
                for (item, file) in mine.enumerated() {
                    let batch = [
                        ["add", file, "--tag", "w\(worker)"],
                        ["bookmark", "add", "sample", String(1 + item % 3), "--label", "w\(worker)-\(item)"],
                        ["memo", "add", "sample", "memo \(worker)-\(item)"],
                        ["search", "herons", "--json"],
                    ]
                    for arguments in batch {
                        collected.append(
                            (try? runner.run(arguments)) ?? RunResult(status: -1, stdout: "", stderr: "could not run"))
                    }
                }
            }
        }
        group.wait()
        let results = collected.all
        #expect(results.count == 80)
        for result in results {
            #expect(result.status == 0, "\(result)")
            #expect(!result.stderr.lowercased().contains("locked"), "\(result)")
        }
        #expect(try box.books().count == 21)
        #expect((try box.ok("bookmark", "list", "--json").json() as? [Any])?.count == 20)
        #expect((try box.ok("memo", "list", "--json").json() as? [Any])?.count == 20)
        let hits = try #require(try box.ok("search", "herons", "--json", "--limit", "0").json() as? [Any])
        #expect(hits.count == 20)
        print("concurrency: \(results.count) operations in 4 processes")
    }
}

@Suite struct PrivacyTests {
    @Test func libraryExportsAndBackupsAreUserOnly() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("highlight", "add", "sample", "--text", "fox", "--occurrence", "1")
        func mode(_ path: String) -> Int {
            ((try? FileManager.default.attributesOfItem(atPath: path))?[.posixPermissions] as? NSNumber)?.intValue ?? -1
        }
        for folder in [box.home, box.home + "/cache", box.home + "/cache/pdfs", box.home + "/cache/tmp"] {
            #expect(mode(folder) == 0o700, "\(folder)")
        }
        for file in box.folder.files().map({ box.folder.path + "/" + $0 }) where file.hasPrefix(box.home) {
            #expect(mode(file) & 0o077 == 0, "\(file) is user-only: \(String(mode(file), radix: 8))")
        }
        let out = box.folder.path + "/notes.md"
        try box.ok("export", "sample", "--format", "markdown", "-o", out)
        #expect(mode(out) == 0o600, "an export holds the reader's notes: user-only")
        let folder = box.folder.path + "/exports"
        try box.ok("export", "sample", "--format", "pdf", "-o", folder + "/")
        #expect(mode(folder) == 0o700, "an export folder is user-only")
        for file in try FileManager.default.contentsOfDirectory(atPath: folder) {
            #expect(mode(folder + "/" + file) == 0o600, "\(file)")
        }
        let backup = box.folder.path + "/backup.json"
        try box.ok("export", "--all", "--format", "json", "-o", backup)
        #expect(mode(backup) == 0o600, "a backup is user-only")
        // Nothing is written outside the library and the requested output.
        let outside = box.folder.files().filter {
            !$0.hasPrefix("home/") && !["notes.md", "backup.json"].contains($0) && !$0.hasPrefix("exports/")
        }
        #expect(outside.isEmpty, "\(outside)")
    }
}

@Suite struct HostileImportTests {
    /// Truncated, wrong-typed, huge and random JSON never crashes import and imports nothing.
    @Test func malformedBackupsImportNothing() throws {
        let source = Sandbox()
        try source.ok("add", Fixtures.pdf("sample.pdf"))
        try source.ok("highlight", "add", "sample", "--text", "fox", "--all")
        let good = try source.ok("export", "--all", "--format", "json").stdout
        let box = Sandbox()
        var random = SeededRandom(seed: 42)
        var cases = [String]()
        // Cut short: never the whole document (a prefix missing only the final line break is whole).
        let whole = good.trimmingCharacters(in: .whitespacesAndNewlines)
        for _ in 0..<12 { cases.append(String(whole.prefix(Int(random.next() % UInt64(whole.count - 1))))) }
        let replacements = [
            ("\"page\" : 1", "\"page\" : null"), ("\"page\" : 1", "\"page\" : -4"),
            ("\"rects\" : [", "\"rects\" : [\"x\","),
            ("\"sha256\" : \"", "\"sha256\" : \"zz"), ("\"uuid\" : \"", "\"uuid\" : \"not-"),
            ("\"createdAt\" : \"", "\"createdAt\" : \"yesterday"),
            ("\"text\" : \"", "\"text\" : 7, \"x\" : \""), ("\"books\" : [", "\"books\" : {"),
        ]
        for (from, to) in replacements {
            if let range = good.range(of: from) { cases.append(good.replacingCharacters(in: range, with: to)) }
        }
        for _ in 0..<10 {
            let bytes = (0..<Int(random.next() % 400)).map { _ in UInt8(truncatingIfNeeded: random.next()) }
            cases.append(String(decoding: bytes, as: UTF8.self))
        }
        cases.append(
            "{\"format\":\"margin-annotations\",\"version\":1,\"exportedAt\":\"x\",\"books\":["
                + String(repeating: "[", count: 5000))
        cases.append(String(repeating: " ", count: 1 << 20))
        var tried = 0
        for (index, content) in cases.enumerated() {
            let path = box.folder.path + "/case\(index).json"
            try Data(content.utf8).write(to: URL(fileURLWithPath: path))
            let result = try box.margin.run(["import", path], timeout: 60)
            tried += 1
            #expect(result.status == 1, "case \(index) exits with an error, not a crash: \(result.status)")
            #expect(result.stderr.hasPrefix("error: "), "case \(index): \(result.stderr)")
            #expect(
                result.stderr.contains("nothing was imported") || result.stderr.contains("not valid JSON")
                    || result.stderr.contains("is not"), "case \(index): \(result.stderr)")
        }
        #expect(try box.books().isEmpty)
        #expect((try box.ok("highlight", "list", "--json").json() as? [Any])?.isEmpty == true)
        print("hostile import: \(tried) malformed files tried, nothing imported")
    }
}

/// Results gathered from several threads.
final class Collected: @unchecked Sendable {
    private let lock = NSLock()
    private var results = [RunResult]()

    func append(_ result: RunResult) {
        lock.lock()
        results.append(result)
        lock.unlock()
    }

    var all: [RunResult] {
        lock.lock()
        defer { lock.unlock() }
        return results
    }
}

import Foundation
import TestSupport
import Testing

/// An HTTPS server on 127.0.0.1 with a self-signed certificate made for the test (openssl and
/// Python's ssl module), serving one PDF.
final class SelfSignedServer {
    let folder = TemporaryFolder()
    let process = Process()
    let port: Int

    init?() {
        let key = folder.path + "/key.pem"
        let certificate = folder.path + "/cert.pem"
        guard
            SmallDisk.shell(
                "openssl req -x509 -newkey rsa:2048 -nodes -keyout '\(key)' -out '\(certificate)' -days 1 -subj /CN=127.0.0.1"
            ) == 0
        else { return nil }
        try? FileManager.default.copyItem(atPath: Fixtures.pdf("sample.pdf"), toPath: folder.path + "/paper.pdf")
        let script = """
            import http.server, ssl, sys, os
            os.chdir(sys.argv[1])
            server = http.server.HTTPServer(("127.0.0.1", 0), http.server.SimpleHTTPRequestHandler)
            context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
            context.load_cert_chain(sys.argv[2], sys.argv[3])
            server.socket = context.wrap_socket(server.socket, server_side=True)
            with open("port.tmp", "w") as f:
                f.write(str(server.server_address[1]))
            os.rename("port.tmp", "port")
            server.serve_forever()
            """
        // Debian's python3 itself (a version manager's shim would stand between it and the signal).
        process.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        process.arguments = ["-c", script, folder.path, certificate, key]
        process.standardInput = FileHandle.nullDevice
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        guard (try? process.start()) != nil else { return nil }
        // The server writes its port to a file once it listens.
        var port: Int?
        for _ in 0..<100 where port == nil {
            port = FileManager.default.contents(atPath: folder.path + "/port").flatMap {
                Int(String(decoding: $0, as: UTF8.self))
            }
            if port == nil { Thread.sleep(forTimeInterval: 0.1) }
        }
        guard let port else {
            process.terminate()
            return nil
        }
        self.port = port
    }

    deinit {
        kill(process.processIdentifier, SIGKILL)
        process.waitUntilExit()
    }

    static let available: Bool =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
}

/// Work that ran without end, or crashed, now ends with one clear error: poppler's work has a
/// time limit, downloads have idle and total timeouts, regular expressions a time budget, and
/// Ctrl-C never crashes or leaves a file behind.
@Suite struct LimitsTests {
    /// A 3 KB PDF whose form XObjects fan out: add fails when poppler's time runs out (before:
    /// it ran for ever, 1.2 GB after three minutes).
    @Test func aFanOutPDFFailsInsteadOfRunningForever() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let before = try box.snapshot()
        let result = try box.margin.run(
            ["add", Fixtures.pdf("fanout.pdf")], environment: ["MARGIN_POPPLER_TIMEOUT": "3"], timeout: 120)
        #expect(result.status == 1, "\(result)")
        #expect(result.stderr.contains("poppler took longer than 3 s"), "\(result.stderr)")
        #expect(result.stderr.components(separatedBy: "error: ").count == 2)
        #expect(try box.snapshot() == before, "nothing added, nothing left behind")
        // A memory limit too small for any work ends it with the same kind of error.
        let starved = try box.margin.run(
            ["add", Fixtures.pdf("second.pdf")], environment: ["MARGIN_POPPLER_MEMORY_MB": "256"], timeout: 120)
        if starved.status != 0 {
            #expect(starved.stderr.contains("poppler") && starved.stderr.hasPrefix("error: "), "\(starved)")
        }
    }

    /// A server that sends a byte a second is given up after --timeout; one that sends nothing
    /// after the idle timeout, with a note for each retry.
    @Test func slowAndSilentServersTimeOut() throws {
        let body = Fixtures.bytes(Fixtures.pdf("sample.pdf"))
        let server = try TestHTTPServer(routes: [
            "/drip.pdf": .handler { _ in
                Reply(headers: [("Content-Type", "application/pdf")], body: body, drip: (bytes: 1, delay: 0.5))
            },
            "/slow-drip.pdf": .handler { _ in
                Reply(
                    headers: [("Content-Type", "application/pdf"), ("ETag", "\"slow\"")],
                    body: body + [UInt8](repeating: 0x20, count: 1 << 20), drip: (bytes: 100, delay: 0.2))
            },
            "/silent.pdf": .handler { _ in
                Reply(headers: [("Content-Type", "application/pdf")], body: body, drip: (bytes: 1, delay: 30))
            },
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        let drip = try box.margin.run(["add", server.url("/drip.pdf"), "--timeout", "2"], timeout: 120)
        #expect(drip.status == 1)
        #expect(
            drip.stderr.contains("took longer than its time limit of 2 s") && drip.stderr.contains("--timeout"),
            "\(drip)")
        // Without --timeout, a drip is given up when a whole window brings less than 1 KiB a
        // second, even one that sends a few hundred bytes a second; what came is kept.
        let stalled = try box.margin.run(
            ["add", server.url("/drip.pdf")], environment: ["MARGIN_STALL_SECONDS": "2"], timeout: 120)
        #expect(stalled.status == 1)
        #expect(stalled.stderr.contains("stalled") && stalled.stderr.contains("less than 1 KiB/s"), "\(stalled)")
        let slowBox = Sandbox()
        let slow = try slowBox.margin.run(
            ["add", server.url("/slow-drip.pdf")], environment: ["MARGIN_STALL_SECONDS": "4"], timeout: 120)
        #expect(slow.status == 1)
        #expect(slow.stderr.contains("stalled") && slow.stderr.contains("run it again to resume"), "\(slow)")
        #expect(slowBox.folder.files().contains { $0.hasSuffix(".part") }, "the partial download is kept")
        let silent = try box.margin.run(
            ["add", server.url("/silent.pdf")],
            environment: ["MARGIN_IDLE_TIMEOUT": "1", "MARGIN_RETRY_DELAY_MS": "10"],
            timeout: 120)
        #expect(silent.status == 1)
        // Silence is tried once more, not three times (before: 241 s for a silent server).
        #expect(silent.stderr.components(separatedBy: "trying again in").count == 2, "one retry, said: \(silent)")
        #expect(silent.stderr.contains("error: "))
        // A refused connection: noted, retried, then one error.
        let refused = try box.margin.run(
            ["add", "http://127.0.0.1:1/closed.pdf"],
            environment: ["MARGIN_RETRIES": "2", "MARGIN_RETRY_DELAY_MS": "10"], timeout: 120)
        #expect(refused.status == 1)
        #expect(refused.stderr.components(separatedBy: "trying again in").count == 3, "\(refused)")
        #expect(refused.stderr.contains("connection refused"))
        #expect(try box.books().isEmpty)
        #expect(box.folder.files().filter { $0.contains("cache/tmp/") }.isEmpty)
    }

    /// A self-signed certificate is refused once, in words (before: retried for 60 s, then a raw
    /// NIOSSL dump).
    @Test(Prerequisite.needs(SelfSignedServer.available, "needs openssl"))
    func anUntrustedCertificateIsRefusedInWords() throws {
        let server = try #require(SelfSignedServer())
        let box = Sandbox()
        let result = try box.margin.run(["add", "https://127.0.0.1:\(server.port)/paper.pdf"], timeout: 120)
        #expect(result.status == 1)
        #expect(result.stderr.contains("certificate"), "\(result)")
        #expect(!result.stderr.contains("NIOSSL") && !result.stderr.contains("trying again"), "\(result)")
        #expect(result.stderr.components(separatedBy: "\n").filter { !$0.isEmpty }.count == 1)
    }

    /// A regular expression that backtracks without end is stopped (before: search hung).
    @Test func aCatastrophicRegexIsStopped() throws {
        let box = Sandbox()
        let text = String(repeating: "zap ", count: 60)
        let memo = try box.margin.run(["add", Fixtures.pdf("sample.pdf")])
        #expect(memo.status == 0)
        let page = box.folder.path + "/zap.pdf"
        // A page of "zap zap zap …": the pattern below tries every way to split it.
        #expect(SmallDisk.shell("python3 '\(Fixtures.root)/fixtures/make-fixtures.py' --text '\(page)' '\(text)'") == 0)
        try box.ok("add", page)
        let result = try box.margin.run(
            ["search", "--regex", "((zap ?)+)+q"], environment: ["MARGIN_REGEX_TIMEOUT": "1"], timeout: 120)
        #expect(result.status != 0, "\(result)")
        #expect(result.stderr.contains("took longer than 1 s") && result.stderr.contains("simplify"), "\(result)")
    }

    /// Ctrl-C at any point of an add: exit 130 (or the plain SIGINT death before the handler is
    /// in place), never a crash; the library stays whole and no PDF is left unused.
    @Test func ctrlCNeverCrashesOrLeavesFiles() throws {
        var random = SeededRandom(seed: 20261122)
        let inputs = ["sample.pdf", "second.pdf", "mixed.pdf", "prose.pdf", "layout.pdf"].map(Fixtures.pdf)
        for round in 0..<12 {
            let box = Sandbox()
            let process = Process()
            process.executableURL = URL(fileURLWithPath: MarginRunner.binary)
            process.arguments = ["add"] + inputs
            process.environment = ProcessInfo.processInfo.environment.merging(["MARGIN_HOME": box.home]) { $1 }
            process.standardOutput = FileHandle.nullDevice
            process.standardError = FileHandle.nullDevice
            try process.start()
            Thread.sleep(forTimeInterval: Double(random.next() % 600) / 1000)
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
            let status = process.terminationStatus
            let crashed = process.terminationReason == .uncaughtSignal && status != SIGINT
            #expect(!crashed, "round \(round): died of signal \(status)")
            if process.terminationReason == .exit {
                #expect(status == 0 || status == 130, "round \(round): exit \(status)")
            }
            let check = try #require(try box.margin.run(["db", "check", "--json"]).json() as? [String: Any])
            #expect(check["ok"] as? Bool == true, "round \(round): \(check)")
            #expect((check["unusedFiles"] as? [String])?.isEmpty == true, "round \(round): \(check)")
        }
    }
}

/// Work that grew faster than its input now grows with it, and inputs too large to be notes are
/// refused before they cost anything.
@Suite struct ScaleTests {
    /// 12,000 matches on one page are highlighted (before: 243 s, each match searched again).
    @Test func twelveThousandHighlightsOnOnePage() throws {
        let box = Sandbox()
        let page = box.folder.path + "/repeated.pdf"
        #expect(
            SmallDisk.shell("python3 '\(Fixtures.root)/fixtures/make-fixtures.py' --repeat '\(page)' ab 12000") == 0)
        try box.ok("add", page)
        let result = try box.margin.run(
            ["highlight", "add", "repeated", "--text", "ab", "--all", "--json"], timeout: 600)
        let saved = try #require(try result.json() as? [[String: Any]], "\(result.stderr)")
        #expect(saved.count == 12_000)
        #expect(
            Set(saved.compactMap { ($0["rects"] as? [[Double]])?.first?.map { Int($0) } }).count == 12_000,
            "each its own place")
    }

    /// 2,200 highlights of text that repeats on every page follow a new version, each told
    /// apart by its context (before: every highlight compared with every page, 51 s for 2,187).
    @Test func manyHighlightsFollowANewVersion() throws {
        let folder = TemporaryFolder()
        let first = folder.path + "/long.pdf"
        #expect(SmallDisk.shell("python3 '\(Fixtures.root)/fixtures/make-fixtures.py' --long '\(first)' 2200") == 0)
        let server = try TestHTTPServer(routes: ["/long.pdf": .validated(Fixtures.bytes(first), etag: "\"1\"")])
        defer { server.shutdown() }
        let box = Sandbox()
        try box.ok("add", server.url("/long.pdf"))
        let added = try box.margin.run(
            ["highlight", "add", "long", "--text", "ipsum dolor", "--all", "--json"], timeout: 600)
        #expect((try added.json() as? [Any])?.count == 2200)
        let second = folder.path + "/long-preface.pdf"
        #expect(
            SmallDisk.shell("python3 '\(Fixtures.root)/fixtures/make-fixtures.py' --long '\(second)' 2200 --preface")
                == 0)
        server.setRoute(
            "/long.pdf",
            .validated(Fixtures.bytes(second), etag: "\"2\"", lastModified: "Thu, 22 Oct 2026 07:28:00 GMT"))
        let refreshed = try box.margin.run(["refresh", "--json"], timeout: 600)
        let outcome = try #require((try refreshed.json() as? [[String: Any]])?.first, "\(refreshed)")
        #expect(outcome["highlights"] as? [String: Int] == ["moved": 2200, "unchanged": 0, "orphaned": 0])
        let list = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        for highlight in list {
            let suffix = highlight.string("suffix") ?? ""
            let number = suffix.split(whereSeparator: { !$0.isNumber }).first.flatMap { Int($0) }
            #expect(number.map { $0 + 1 } == highlight.int("page"), "page \(highlight.int("page") ?? 0): \(suffix)")
        }
    }

    /// A memo of megabytes, or a PDF larger than --max-size, is refused at once.
    @Test func oversizedInputsAreRefusedAtOnce() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let big = String(repeating: "a memo that goes on. ", count: 60_000)
        let memo = try box.margin.run(["memo", "add", "sample", "-"], stdin: big)
        #expect(memo.status != 0 && memo.stderr.contains("more than the 1.0 MiB"), "\(memo.stderr)")
        let backup = box.folder.path + "/backup.json"
        try box.ok("export", "--all", "--format", "json", "-o", backup)
        var document = try #require(
            try JSONSerialization.jsonObject(with: Data(contentsOf: URL(fileURLWithPath: backup))) as? [String: Any])
        var books = try #require(document["books"] as? [[String: Any]])
        books[0]["memos"] = [
            [
                "uuid": UUID().uuidString, "page": 1, "text": big, "createdAt": "2026-01-01T00:00:00.000Z",
                "updatedAt": "2026-01-01T00:00:00.000Z",
            ]
        ]
        document["books"] = books
        try JSONSerialization.data(withJSONObject: document).write(to: URL(fileURLWithPath: backup))
        let imported = try box.fails("import", backup)
        #expect(imported.stderr.contains("books[0].memos[0].text"), "\(imported.stderr)")
        // A sparse 3 GiB "PDF": refused by its size, nothing copied.
        let huge = box.folder.path + "/huge.pdf"
        #expect(SmallDisk.shell("truncate -s 3G '\(huge)'") == 0)
        let refused = try box.fails("add", huge)
        #expect(refused.stderr.contains("larger than the limit"))
        #expect(box.folder.files().filter { $0.contains("cache/tmp/") }.isEmpty)
    }
}

/// Text extraction children serve one book after another: what each book gets is its own text,
/// whatever the child read before, and a child stopped for its time limit or answering with an
/// error leaves the next books of the same command read right.
@Suite struct ExtractorReuseTests {
    @Test func oneAddReadsEveryBookRightThroughReusedChildren() throws {
        let names = ["sample.pdf", "fanout.pdf", "second.pdf", "prose.pdf", "encrypted.pdf", "layout.pdf", "mixed.pdf"]
        let box = Sandbox()
        let result = try box.margin.run(
            ["add", "--json"] + names.map { Fixtures.pdf($0) }, environment: ["MARGIN_POPPLER_TIMEOUT": "3"],
            timeout: 120)
        #expect(result.status == 1, "\(result)")
        let outcomes = try #require(try result.json() as? [[String: Any]], "\(result)")
        #expect(outcomes.count == names.count)
        var added = [String: Int]()
        for (name, outcome) in zip(names, outcomes) {
            let ok = outcome["ok"] as? Bool == true
            switch name {
            case "fanout.pdf":
                #expect(!ok && outcome.string("error")?.contains("poppler took longer than 3 s") == true, "\(outcome)")
            case "encrypted.pdf":
                #expect(!ok && outcome.string("error")?.contains("password") == true, "\(outcome)")
            default:
                #expect(ok, "\(name): \(outcome)")
                added[name] = (outcome["book"] as? [String: Any])?.int("id")
            }
        }
        // Each book's stored text equals what a library given that book alone stores.
        for (name, id) in added {
            let alone = Sandbox()
            try alone.ok("add", Fixtures.pdf(name))
            let expected = try alone.ok("text", "1").stdout
            #expect(!expected.isEmpty)
            #expect(try box.ok("text", String(id)).stdout == expected, "\(name)")
        }
    }
}

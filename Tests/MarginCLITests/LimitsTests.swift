import Foundation
import Testing
import TestSupport

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
                "openssl req -x509 -newkey rsa:2048 -nodes -keyout '\(key)' -out '\(certificate)' -days 1 -subj /CN=127.0.0.1") == 0
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
        guard (try? process.run()) != nil else { return nil }
        // The server writes its port to a file once it listens.
        var port: Int?
        for _ in 0..<100 where port == nil {
            port = FileManager.default.contents(atPath: folder.path + "/port").flatMap { Int(String(decoding: $0, as: UTF8.self)) }
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
        FileManager.default.isExecutableFile(atPath: "/usr/bin/openssl") && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3")
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
            "/silent.pdf": .handler { _ in
                Reply(headers: [("Content-Type", "application/pdf")], body: body, drip: (bytes: 1, delay: 30))
            },
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        let drip = try box.margin.run(["add", server.url("/drip.pdf"), "--timeout", "2"], timeout: 120)
        #expect(drip.status == 1)
        #expect(drip.stderr.contains("took longer than --timeout 2 s"), "\(drip)")
        let silent = try box.margin.run(
            ["add", server.url("/silent.pdf")], environment: ["MARGIN_IDLE_TIMEOUT": "1", "MARGIN_RETRIES": "1", "MARGIN_RETRY_DELAY_MS": "10"],
            timeout: 120)
        #expect(silent.status == 1)
        #expect(silent.stderr.contains("trying again in"), "a retry is said: \(silent)")
        #expect(silent.stderr.contains("error: "))
        // A refused connection: noted, retried, then one error.
        let refused = try box.margin.run(
            ["add", "http://127.0.0.1:1/closed.pdf"], environment: ["MARGIN_RETRIES": "2", "MARGIN_RETRY_DELAY_MS": "10"], timeout: 120)
        #expect(refused.status == 1)
        #expect(refused.stderr.components(separatedBy: "trying again in").count == 3, "\(refused)")
        #expect(refused.stderr.contains("connection refused"))
        #expect(try box.books().isEmpty)
        #expect(box.folder.files().filter { $0.contains("cache/tmp/") }.isEmpty)
    }

    /// A self-signed certificate is refused once, in words (before: retried for 60 s, then a raw
    /// NIOSSL dump).
    @Test(.enabled(if: SelfSignedServer.available, "needs openssl"))
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
            try process.run()
            Thread.sleep(forTimeInterval: Double(random.next() % 600) / 1000)
            kill(process.processIdentifier, SIGINT)
            process.waitUntilExit()
            let status = process.terminationStatus
            let crashed = process.terminationReason == .uncaughtSignal && status != SIGINT
            #expect(!crashed, "round \(round): died of signal \(status)")
            if process.terminationReason == .exit { #expect(status == 0 || status == 130, "round \(round): exit \(status)") }
            let check = try #require(try box.margin.run(["db", "check", "--json"]).json() as? [String: Any])
            #expect(check["ok"] as? Bool == true, "round \(round): \(check)")
            #expect((check["unusedFiles"] as? [String])?.isEmpty == true, "round \(round): \(check)")
        }
    }
}

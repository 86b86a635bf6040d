import Foundation
import NIOConcurrencyHelpers
import TestSupport
import Testing

/// Downloads against a real HTTP server on 127.0.0.1: validators, ranges, retries, limits.
@Suite struct DownloadTests {
    let sample = Fixtures.bytes(Fixtures.pdf("sample.pdf"))
    /// Fast retries for tests.
    let fast = ["MARGIN_RETRY_DELAY_MS": "5"]

    func run(_ box: Sandbox, _ arguments: [String], environment: [String: String] = [:]) throws -> RunResult {
        try box.margin.run(arguments, environment: fast.merging(environment) { $1 })
    }

    @Test func etagRevalidationTransfersNothing() throws {
        let server = try TestHTTPServer(routes: ["/a.pdf": .validated(sample, etag: "\"v1\"")])
        defer { server.shutdown() }
        let box = Sandbox()
        #expect(try run(box, ["add", server.url("/a.pdf")]).status == 0)
        let refreshed = try run(box, ["refresh", "--json"])
        #expect(refreshed.status == 0, "\(refreshed)")
        let outcome = try #require((try refreshed.json() as? [[String: Any]])?.first)
        #expect(outcome.string("status") == "not-modified")
        let conditional = try #require(server.requests("/a.pdf").last)
        #expect(conditional.header("if-none-match") == "\"v1\"")
        #expect(conditional.header("if-modified-since") == "Wed, 21 Oct 2026 07:28:00 GMT")
        // Re-adding the known URL revalidates too: a 304, the same book.
        let again = try run(box, ["add", "--json", server.url("/a.pdf")])
        #expect((try again.json() as? [[String: Any]])?.first?["duplicate"] as? Bool == true)
        #expect(server.requests("/a.pdf").last?.header("if-none-match") == "\"v1\"")
        #expect(server.requests("/a.pdf").first?.header("user-agent")?.hasPrefix("margin/") == true)
    }

    /// A validated file whose first response is cut after `cut` bytes; later ones are whole
    /// (or, with `ranges`, honour Range).
    func cutOnce(_ bytes: [UInt8], etag: String, ranges: Bool, cut: Int) -> Route {
        let requests = NIOLockedValueBox(0)
        return .handler { request in
            let first = requests.withLockedValue { count -> Bool in
                count += 1
                return count == 1
            }
            return serveValidated(
                bytes, etag: etag, lastModified: "Wed, 21 Oct 2026 07:28:00 GMT", ranges: ranges,
                cutAfter: first ? cut : nil,
                request: request)
        }
    }

    @Test func aCutDownloadResumesWithRangeAndIfRange() throws {
        let server = try TestHTTPServer(routes: ["/cut.pdf": cutOnce(sample, etag: "\"e1\"", ranges: true, cut: 700)])
        defer { server.shutdown() }
        let box = Sandbox()
        // No retries: the first run fails and keeps the partial file with its validators.
        let failed = try run(box, ["add", server.url("/cut.pdf")], environment: ["MARGIN_RETRIES": "0"])
        #expect(failed.status != 0)
        #expect(failed.stderr.contains("cut short"))
        let parts = box.folder.files().filter { $0.hasSuffix(".part") }
        #expect(parts.count == 1, "a .part is left: \(box.folder.files())")
        #expect(try box.books().isEmpty, "nothing half-added")
        // The next run asks only for the rest.
        let resumed = try run(box, ["add", server.url("/cut.pdf")])
        #expect(resumed.status == 0, "\(resumed)")
        let last = try #require(server.requests("/cut.pdf").last)
        #expect(last.header("range") == "bytes=700-")
        #expect(last.header("if-range") == "\"e1\"")
        let book = try #require(try box.books().first)
        #expect(Fixtures.bytes(try #require(book.string("file"))) == sample, "the resumed file is whole")
        #expect(box.folder.files().filter { $0.hasSuffix(".part") || $0.hasSuffix(".json") }.isEmpty)
    }

    @Test func aServerThatIgnoresRangeStartsOver() throws {
        let server = try TestHTTPServer(routes: [
            "/norange.pdf": cutOnce(sample, etag: "\"n1\"", ranges: false, cut: 500)
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        let result = try run(box, ["add", server.url("/norange.pdf")])
        #expect(result.status == 0, "\(result)")
        #expect(server.hitCount("/norange.pdf") == 2, "one retry within the run")
        #expect(server.requests("/norange.pdf").last?.header("range") == "bytes=500-", "it asked to resume")
        #expect(
            Fixtures.bytes(try #require(try box.books().first?.string("file"))) == sample,
            "and got the whole file from 0")
    }

    @Test func retriesServerErrorsButNotClientErrors() throws {
        let calls = NIOLockedValueBox(0)
        let bytes = sample
        let server = try TestHTTPServer(routes: [
            "/flaky.pdf": .handler { _ in
                let count = calls.withLockedValue { c -> Int in
                    c += 1
                    return c
                }
                return count < 3
                    ? Reply(status: 503) : Reply(headers: [("Content-Type", "application/pdf")], body: bytes)
            },
            "/gone.pdf": .status(404),
            "/a": .redirect("/b"), "/b": .redirect("/c"), "/c": .redirect("/flaky.pdf"),
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        #expect(try run(box, ["add", server.url("/a")]).status == 0, "503, 503, then 200 through a redirect chain")
        #expect(server.hitCount("/flaky.pdf") == 3)
        #expect(try run(box, ["add", server.url("/gone.pdf")]).status != 0)
        #expect(server.hitCount("/gone.pdf") == 1, "a 404 is not retried")
    }

    @Test func aSlowDripStillArrives() throws {
        let bytes = sample
        let server = try TestHTTPServer(routes: [
            "/slow.pdf": .handler { _ in
                Reply(headers: [("Content-Type", "application/pdf")], body: bytes, drip: (bytes: 200, delay: 0.02))
            }
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        let result = try run(box, ["add", server.url("/slow.pdf")])
        #expect(result.status == 0, "\(result)")
        #expect(result.stderr.isEmpty, "no progress bar when stderr is not a terminal: \(result.stderr)")
    }

    @Test func memoryStaysFlatForALargeDownload() throws {
        // 96 MiB of a PDF-looking body: streamed to disk, never held in memory.
        var body = Array("%PDF-1.4\n".utf8)
        body += [UInt8](repeating: 0x20, count: 96 << 20)
        body += Array("\n%%EOF\n".utf8)
        let big = body
        let server = try TestHTTPServer(routes: [
            "/big.pdf": .handler { _ in Reply(headers: [("Content-Type", "application/pdf")], body: big) }
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        /// The peak memory of `margin add SOURCE` in a library of its own, and what it said.
        func peak(_ source: String, home: String) throws -> (kilobytes: Int, stderr: String) {
            let process = Process()
            process.executableURL = URL(fileURLWithPath: "/usr/bin/time")
            process.arguments = ["-f", "maxrss=%M", MarginRunner.binary, "add", source]
            process.environment = ProcessInfo.processInfo.environment.merging(["MARGIN_HOME": home]) { $1 }
            let err = Pipe()
            process.standardError = err
            process.standardOutput = FileHandle.nullDevice
            try process.start()
            let data = err.fileHandleForReading.readDataToEndOfFile()
            process.waitUntilExit()
            let text = String(decoding: data, as: UTF8.self)
            let kilobytes =
                text.components(separatedBy: "maxrss=").last.flatMap {
                    Int($0.trimmingCharacters(in: .whitespacesAndNewlines))
                } ?? 0
            return (kilobytes, text)
        }
        let (kilobytes, text) = try peak(server.url("/big.pdf"), home: box.home)
        // What an add of a one-page PDF takes (the executable, poppler, threads): the download
        // may add buffers to that, not its 96 MiB.
        let other = Sandbox()
        let (baseline, _) = try peak(Fixtures.pdf("sample.pdf"), home: other.home)
        #expect(text.contains("error: "), "the body is not a real PDF, so add fails after downloading it")
        #expect(baseline > 0 && kilobytes > 0)
        #expect(
            kilobytes - baseline < 32 * 1024,
            "peak memory \(kilobytes) KiB for a 96 MiB download, \(baseline) KiB for a one-page PDF")
        #expect(
            box.folder.files().filter { $0.contains("cache/") && !$0.hasSuffix("/") }.filter { $0.contains("pdfs/") }
                .isEmpty)
    }
}

@Suite struct InterruptTests {
    /// Ctrl-C in the middle of a download: exit 130 with a clear line, the .part kept, nothing
    /// half-added; the next run resumes from where it stopped.
    @Test func ctrlCKeepsThePartAndTheNextRunResumes() throws {
        let pdf = Fixtures.bytes(Fixtures.pdf("sample.pdf"))
        let server = try TestHTTPServer(routes: [
            "/slow.pdf": .handler { request in
                var reply = serveValidated(
                    pdf, etag: "\"s\"", lastModified: "Wed, 21 Oct 2026 07:28:00 GMT", ranges: true, cutAfter: nil,
                    request: request)
                if request.header("range") == nil { reply.drip = (bytes: 8, delay: 0.1) }
                return reply
            }
        ])
        defer { server.shutdown() }
        let box = Sandbox()
        let process = Process()
        process.executableURL = URL(fileURLWithPath: MarginRunner.binary)
        process.arguments = ["add", server.url("/slow.pdf")]
        process.environment = ProcessInfo.processInfo.environment.merging(["MARGIN_HOME": box.home]) { $1 }
        let err = Pipe()
        process.standardError = err
        process.standardOutput = FileHandle.nullDevice
        try process.start()
        // Wait until some of the body has arrived, then interrupt.
        let part = box.home + "/cache/tmp"
        // Synchronous waiting: other tests may hold every cooperative thread.
        for _ in 0..<1000 {
            let files = (try? FileManager.default.contentsOfDirectory(atPath: part)) ?? []
            if let name = files.first(where: { $0.hasSuffix(".part") }),
                ((try? FileManager.default.attributesOfItem(atPath: part + "/" + name)[.size] as? NSNumber)?.intValue
                    ?? 0) > 40
            {
                break
            }
            Thread.sleep(forTimeInterval: 0.02)
        }
        process.interrupt()
        process.waitUntilExit()
        let message = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        #expect(process.terminationStatus == 130)
        #expect(message.contains("error: interrupted"))
        #expect(box.folder.files().contains { $0.hasSuffix(".part") })
        #expect(try box.books().isEmpty)
        let resumed = try box.margin.run(["add", server.url("/slow.pdf")])
        #expect(resumed.status == 0, "\(resumed)")
        #expect(server.requests("/slow.pdf").last?.header("range")?.hasPrefix("bytes=") == true)
        #expect(Fixtures.bytes(try #require(try box.books().first?.string("file"))) == pdf)
    }
}

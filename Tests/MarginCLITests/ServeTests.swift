import Foundation
import TestSupport
import Testing

/// `margin serve` as a user runs it: a real server on 127.0.0.1, and its reader in a real
/// browser.
final class RunningServer: @unchecked Sendable {
    let process = Process()
    let port: Int
    private let errors = Pipe()

    /// Starts `margin serve --port 0 ARGS` on `box`'s library and waits for the address it says.
    init(_ box: Sandbox, _ arguments: [String] = [], environment: [String: String] = [:]) throws {
        process.executableURL = URL(fileURLWithPath: MarginRunner.binary)
        process.arguments = ["serve", "--port", "0"] + arguments
        var env = ProcessInfo.processInfo.environment
        env["MARGIN_HOME"] = box.home
        for (key, value) in environment { env[key] = value }
        process.environment = env
        process.standardError = errors
        process.standardOutput = FileHandle.nullDevice
        try process.start()
        // "serving … at http://127.0.0.1:PORT/ (Ctrl-C stops)"
        var said = ""
        let handle = errors.fileHandleForReading
        while !said.contains("(Ctrl-C stops)") {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            said += String(decoding: chunk, as: UTF8.self)
        }
        guard let range = said.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression),
            let port = Int(said[range].split(separator: ":")[2])
        else {
            process.terminate()
            throw ServeTestError.didNotStart(said)
        }
        self.port = port
    }

    var url: String { "http://127.0.0.1:\(port)" }

    /// Sends SIGTERM and returns the exit status and what it said after starting.
    func stop() -> (status: Int32, said: String) {
        kill(process.processIdentifier, SIGTERM)
        process.waitUntilExit()
        let rest = errors.fileHandleForReading.readDataToEndOfFile()
        return (process.terminationStatus, String(decoding: rest, as: UTF8.self))
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }
}

enum ServeTestError: Error { case didNotStart(String) }

/// Fetches `url` (GET, or with a body) with curl: status and body.
func fetch(_ url: String, method: String = "GET", body: String? = nil, headers: [String] = []) throws -> (
    Int, String
) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    var arguments = ["-s", "-o", "-", "-w", "\n%{http_code}", "-X", method, url]
    for header in headers { arguments += ["-H", header] }
    if let body { arguments += ["-H", "Content-Type: application/json", "--data-binary", body] }
    process.arguments = arguments
    let out = Pipe()
    process.standardOutput = out
    try process.start()
    let data = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    let text = String(decoding: data, as: UTF8.self)
    let parts = text.split(separator: "\n", omittingEmptySubsequences: false)
    return (Int(parts.last ?? "") ?? 0, parts.dropLast().joined(separator: "\n"))
}

@Suite struct ServeTests {
    static let curl = FileManager.default.isExecutableFile(atPath: "/usr/bin/curl")

    @Test(.enabled(if: curl, "needs curl"))
    func theServerAnswersTheAPIAndStopsCleanlyOnSIGTERM() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let server = try RunningServer(box)
        let (status, body) = try fetch(server.url + "/api/books/1/bookmarks", method: "POST", body: #"{"page": 2}"#)
        #expect(status == 201, "\(body)")
        let (missing, error) = try fetch(server.url + "/api/books/1/pages/7.png")
        #expect(missing == 404 && error.contains("\"error\""), "\(error)")
        let (ok, page) = try fetch(server.url + "/books/1/pages/2")
        #expect(ok == 200 && page.contains("data-page=\"2\""))
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.said)")
        #expect(stopped.said.contains("stopped"))
        // What the browser's client saved, the CLI sees.
        let bookmarks = try #require(try box.ok("bookmark", "list", "--json").json() as? [[String: Any]])
        #expect(bookmarks.map { $0["page"] as? Int } == [2])
    }

    @Test func anotherAddressNeedsAToken() throws {
        let box = Sandbox()
        let refused = try box.fails("serve", "--host", "0.0.0.0", "--port", "0")
        #expect(refused.stderr.contains("token"), "\(refused)")
    }

    @Test(.enabled(if: curl, "needs curl"))
    func withATokenRequestsWithoutItGet401() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let server = try RunningServer(box, [], environment: ["MARGIN_TOKEN": "t0ken"])
        #expect(try fetch(server.url + "/api/books").0 == 401)
        #expect(try fetch(server.url + "/api/books/1/bookmarks", method: "POST", body: #"{"page": 1}"#).0 == 401)
        #expect(try fetch(server.url + "/api/books", headers: ["Authorization: Bearer t0ken"]).0 == 200)
        _ = server.stop()
        #expect((try box.ok("bookmark", "list", "--json").json() as? [Any])?.isEmpty == true, "nothing written")
    }
}

/// The reader in real browsers (Tests/Browser/reader_e2e.py): Debian's chromium driven by
/// Selenium through chromium-driver, and Debian's firefox-esr through its Marionette protocol.
@Suite struct BrowserTests {
    static let script = Fixtures.root + "/Tests/Browser/reader_e2e.py"

    static func python(_ module: String) -> Bool {
        let probe = Process()
        probe.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        probe.arguments = ["python3", "-c", "import \(module)"]
        probe.standardError = FileHandle.nullDevice
        guard (try? probe.start()) != nil else { return false }
        probe.waitUntilExit()
        return probe.terminationStatus == 0
    }

    static let chromium =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/chromium")
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/chromedriver") && python("selenium")
    static let firefox =
        FileManager.default.isExecutableFile(atPath: "/usr/bin/firefox-esr") && python("marionette_driver")

    @Test(.enabled(if: chromium, "needs chromium, chromium-driver and selenium (make test installs them)"))
    func inChromium() throws { try readSelectHighlightNoteBookmarkAndSearch(in: "chromium") }

    @Test(.enabled(if: firefox, "needs firefox-esr and marionette-driver (make test installs them)"))
    func inFirefox() throws { try readSelectHighlightNoteBookmarkAndSearch(in: "firefox") }

    /// Select a sentence and press h, add a note and a bookmark, search and follow a hit, turn a
    /// page; then check through the CLI that the highlight holds exactly that text, page and the
    /// rects the CLI itself places on that text.
    func readSelectHighlightNoteBookmarkAndSearch(in browser: String) throws {
        let sentence = "An inverted index maps each word"
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let server = try RunningServer(box)
        let screenshot = box.folder.path + "/reader.png"
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = [
            "python3", Self.script, browser, server.url, "1", "2", sentence, "zebra", "a note from the browser",
            screenshot,
        ]
        let out = Pipe()
        let err = Pipe()
        process.standardOutput = out
        process.standardError = err
        try process.start()
        let output = out.fileHandleForReading.readDataToEndOfFile()
        let errors = err.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        _ = server.stop()
        let said = String(decoding: errors, as: UTF8.self)
        #expect(process.terminationStatus == 0, "\(said)")
        let report = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any], "\(said)")
        #expect(report["layer_page"] as? String == "2")
        #expect(report["help_open"] as? Bool == true)
        #expect(report["hit"] as? String == "p. 3")
        #expect(report["followed_to"] as? String == "3")
        #expect((report["found"] as? String)?.lowercased() == "zebra", "the hit is marked on its page")
        #expect(report["after_arrow"] as? String == "2")
        #expect(report["page_errors"] is NSNull, "no script errors: \(report)")
        if browser == "chromium" { #expect((report["console_errors"] as? [String]) == [], "no console errors") }
        #expect(FileManager.default.fileExists(atPath: screenshot))

        let highlights = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(highlights.count == 1)
        let highlight = try #require(highlights.first)
        #expect(highlight["text"] as? String == sentence)
        #expect(highlight["page"] as? Int == 2)
        let other = Sandbox()
        try other.ok("add", Fixtures.pdf("sample.pdf"))
        let placed = try #require(
            try other.ok("highlight", "add", "1", "--text", sentence, "--page", "2", "--json").json()
                as? [[String: Any]])
        #expect(highlight["rects"] as? [[Double]] == placed.first?["rects"] as? [[Double]])
        let bookmarks = try #require(try box.ok("bookmark", "list", "--json").json() as? [[String: Any]])
        #expect(bookmarks.map { $0["page"] as? Int } == [2])
        let memos = try #require(try box.ok("memo", "list", "--json").json() as? [[String: Any]])
        #expect(memos.map { $0["text"] as? String } == ["a note from the browser"])
        #expect(memos.map { $0["page"] as? Int } == [2])
    }
}

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
    /// `descriptors` caps its open files (soft and hard, with util-linux's prlimit).
    init(_ box: Sandbox, _ arguments: [String] = [], environment: [String: String] = [:], descriptors: Int? = nil)
        throws
    {
        if let descriptors {
            process.executableURL = URL(fileURLWithPath: "/usr/bin/prlimit")
            process.arguments =
                ["--nofile=\(descriptors):\(descriptors)", MarginRunner.binary, "serve", "--port", "0"] + arguments
        } else {
            process.executableURL = URL(fileURLWithPath: MarginRunner.binary)
            process.arguments = ["serve", "--port", "0"] + arguments
        }
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
func fetch(
    _ url: String, method: String = "GET", body: String? = nil, headers: [String] = [], maxTime: Int = 120
) throws -> (Int, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
    var arguments = ["-s", "--max-time", String(maxTime), "-o", "-", "-w", "\n%{http_code}", "-X", method, url]
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

    @Test(Prerequisite.needs(curl, "needs curl"))
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

    @Test(Prerequisite.needs(curl, "needs curl"))
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

/// Runs a script of Tests/Browser with python3: its exit status, stdout, and what it said on
/// stderr (read on a thread of its own, so neither pipe fills while the other is read).
func runBrowserScript(_ arguments: [String], with program: String = "python3") throws -> (Int32, Data, String) {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
    process.arguments = [program] + arguments
    let out = Pipe()
    let err = Pipe()
    process.standardOutput = out
    process.standardError = err
    try process.start()
    let errors = Answers()
    let reader = Thread {
        errors.set("err", (0, String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)))
    }
    reader.start()
    let output = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    while errors.get("err") == nil { usleep(10_000) }
    return (process.terminationStatus, output, errors.get("err")?.1 ?? "")
}

/// What any web page, or any process of the machine, could do to a running server.
@Suite struct ServeAttackTests {
    @Test(
        Prerequisite.needs(
            BrowserTests.chromium, "needs chromium, chromium-driver and selenium (make test installs them)"))
    func pagesOfOtherSitesAndReboundNamesChangeNothingInChromium() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        try box.ok("highlight", "add", "1", "--text", "quick brown fox", "--occurrence", "1", "--note", "mine")
        try box.ok("bookmark", "add", "1", "1", "--label", "mine")
        try box.ok("memo", "add", "1", "--page", "1", "mine")
        let before = try box.ok("annotations", "1", "--json").stdout
        let server = try RunningServer(box)
        let (status, output, said) = try runBrowserScript(
            [Fixtures.root + "/Tests/Browser/cross_site_attack.py", server.url, "1", "1"])
        _ = server.stop()
        #expect(status == 0, "\(said)")
        let report = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any], "\(said)")
        // The attack page ran every attempt (forms, beacons, fetches)…
        let crossSite = try #require(report["cross_site"] as? [String: Any], "\(report)")
        #expect(crossSite.count == 18, "\(crossSite)")
        // …and a page under a name rebound to 127.0.0.1 read nothing and wrote nothing.
        let rebound = try #require(report["rebind"] as? [String: [Any]], "\(report)")
        #expect(rebound.count == 4)
        for (name, seen) in rebound { #expect(seen.first as? Int == 421, "\(name): \(seen)") }
        #expect((report["rebind_page"] as? String)?.contains("does not answer") == true)
        // Nothing changed in the library.
        #expect(try box.ok("annotations", "1", "--json").stdout == before)
    }

    @Test func aNameIsLoopbackByTheAddressesItResolvesTo() throws {
        let box = Sandbox()
        let unresolved = try box.fails("serve", "--host", "127.lan.invalid", "--port", "0")
        #expect(unresolved.stderr.contains("cannot resolve"), "\(unresolved)")
        let other = try box.fails("serve", "--host", "0.0.0.0", "--port", "0", "--allow-host", "x y")
        #expect(other.stderr.contains("--allow-host"), "\(other)")
        let both = try box.fails("serve", "--token", "a", "--token-file", "/dev/null")
        #expect(both.stderr.contains("not both"), "\(both)")
        let empty = try box.fails("serve", "--host", "0.0.0.0", "--port", "0", "--token-file", "/dev/null")
        #expect(empty.stderr.contains("empty"), "\(empty)")
    }

    @Test(Prerequisite.needs(ServeTests.curl, "needs curl"))
    func aTokenFromAFileAndAllowedNames() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let file = box.folder.path + "/token"
        try "s3cret-from-a-file\n".write(toFile: file, atomically: true, encoding: .utf8)
        let server = try RunningServer(box, ["--token-file", file, "--allow-host", "reader.lab.example"])
        #expect(try fetch(server.url + "/api/books").0 == 401)
        #expect(try fetch(server.url + "/api/books", headers: ["Authorization: bearer s3cret-from-a-file"]).0 == 200)
        let named = ["Authorization: Bearer s3cret-from-a-file", "Host: reader.lab.example:\(server.port)"]
        #expect(try fetch(server.url + "/api/books", headers: named).0 == 200)
        let other = ["Authorization: Bearer s3cret-from-a-file", "Host: attacker.test:\(server.port)"]
        #expect(try fetch(server.url + "/api/books", headers: other).0 == 421)
        _ = server.stop()
    }

    /// Connections that never finish their headers are closed, and while the server has no
    /// descriptor left for new ones it still serves a new client once it has shed them.
    @Test(Prerequisite.needs(ServeTests.curl, "needs curl"))
    func connectionsThatNeverFinishTheirHeadersDoNotLockOthersOut() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        let server = try RunningServer(box, descriptors: 128)
        var sockets = [Int32]()
        defer { sockets.forEach { close($0) } }
        for _ in 0..<200 {
            let socket = Glibc.socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
            var address = sockaddr_in()
            address.sin_family = sa_family_t(AF_INET)
            address.sin_port = in_port_t(UInt16(server.port).bigEndian)
            address.sin_addr.s_addr = inet_addr("127.0.0.1")
            let connected = withUnsafePointer(to: &address) {
                $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                    connect(socket, $0, socklen_t(MemoryLayout<sockaddr_in>.size))
                }
            }
            guard connected == 0 else {
                close(socket)
                break
            }
            _ = "GET /api/books HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Slow: ".withCString { send(socket, $0, strlen($0), 0) }
            sockets.append(socket)
        }
        #expect(sockets.count > 128, "more stalled connections than the server has descriptors")
        // A new client is answered (the stalled ones are closed after 10 s; curl waits up to 60 s).
        let (status, body) = try fetch(server.url + "/api/books", headers: [], maxTime: 60)
        #expect(status == 200, "\(body)")
        // The stalled connections were closed by the server: reading them ends.
        var closed = 0
        for socket in sockets.prefix(20) {
            var timeout = timeval(tv_sec: 30, tv_usec: 0)
            setsockopt(socket, SOL_SOCKET, SO_RCVTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
            var byte: UInt8 = 0
            if recv(socket, &byte, 1, 0) <= 0 { closed += 1 }
        }
        #expect(closed == 20)
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.said)")
    }
}

/// Pages built to take minutes to draw, and searches that run long, asked for by any web page
/// (`<img>` and GETs need no token on loopback): bounded, isolated, stopped when not wanted.
@Suite struct ServeLimitsTests {
    /// A library with the heavy page (its text reads in milliseconds) and a light book.
    static func heavyLibrary() throws -> Sandbox {
        let box = Sandbox()
        let heavy = box.folder.path + "/heavy.pdf"
        #expect(SmallDisk.shell("python3 '\(Fixtures.root)/fixtures/make-fixtures.py' --heavy-image '\(heavy)'") == 0)
        try box.ok("add", heavy)
        try box.ok("add", Fixtures.pdf("sample.pdf"))
        return box
    }

    /// Render children of `server` (pgrep -P).
    static func children(of server: RunningServer) -> Int {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/pgrep")
        process.arguments = ["-c", "-P", String(server.process.processIdentifier)]
        let out = Pipe()
        process.standardOutput = out
        guard (try? process.start()) != nil else { return -1 }
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return Int(String(decoding: data, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) ?? -1
    }

    /// The fields of a /proc stat file after the command's name (the third field first).
    static func statFields(_ path: String) -> [Substring]? {
        guard let stat = try? String(contentsOfFile: path, encoding: .utf8),
            let end = stat.range(of: ")", options: .backwards)
        else { return nil }
        return stat[end.upperBound...].split(separator: " ")
    }

    /// The pids of `server`'s children.
    /// A client (curl, for the test to end) asking `server` for book 1's first page at `dpi`,
    /// and the child drawing it, once it runs.
    static func startRender(_ server: RunningServer, dpi: Int) throws -> (client: Process, child: Int32) {
        let client = Process()
        client.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        client.arguments = ["-s", "-o", "/dev/null", server.url + "/api/books/1/pages/1.png?dpi=\(dpi)"]
        try client.start()
        var waited = 0
        while children(of: server) < 1 && waited < 600 {
            usleep(50_000)
            waited += 1
        }
        return (client, try #require(childPids(of: server).first))
    }

    static func childPids(of server: RunningServer) -> [Int32] {
        let parent = server.process.processIdentifier
        let pids = (try? FileManager.default.contentsOfDirectory(atPath: "/proc"))?.compactMap { Int32($0) } ?? []
        return pids.filter { statFields("/proc/\($0)/stat").map { $0.count > 17 && Int32($0[1]) == parent } ?? false }
    }

    /// The nice values of `server`'s children (/proc/PID/stat, field 19).
    static func childNiceness(of server: RunningServer) -> [Int] {
        childPids(of: server).compactMap { statFields("/proc/\($0)/stat").flatMap { Int($0[16]) } }
    }

    /// The scheduling policies of the threads of `server`'s children (/proc/PID/task/TID/stat,
    /// field 41: 0 normal, 5 `SCHED_IDLE`).
    static func childPolicies(of server: RunningServer) -> [Int] {
        childPids(of: server).flatMap { pid in
            ((try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/task")) ?? []).compactMap {
                statFields("/proc/\(pid)/task/\($0)/stat").flatMap { $0.count > 38 ? Int($0[38]) : nil }
            }
        }
    }

    @Test(Prerequisite.needs(ServeTests.curl, "needs curl"))
    func anOverLimitPageIsAJSONErrorRememberedWhileOthersAreServed() throws {
        let box = try Self.heavyLibrary()
        let server = try RunningServer(box, [], environment: ["MARGIN_POPPLER_TIMEOUT": "15"])
        let image = server.url + "/api/books/1/pages/1.png?dpi=50"
        // The heavy render runs; meanwhile JSON, HTML and another book's page are answered.
        let answered = Answers()
        let heavy = Thread {
            answered.set("heavy", try? fetch(image))
        }
        heavy.start()
        var waited = 0
        while Self.children(of: server) == 0 && answered.get("heavy") == nil && waited < 600 {
            usleep(50_000)
            waited += 1
        }
        // The render yields to the server's requests: its child runs at a lower priority (nice).
        #expect(Self.childNiceness(of: server).contains(10), "\(Self.childNiceness(of: server))")
        #expect(try fetch(server.url + "/api/books/2").0 == 200)
        #expect(try fetch(server.url + "/").0 == 200)
        #expect(try fetch(server.url + "/api/books/2/pages/1.png?dpi=30").0 == 200)
        #expect(answered.get("heavy") == nil, "the heavy page was still drawing while the others were answered")
        // Past a second, the render takes only what no one else wants: every thread of its child
        // `SCHED_IDLE`.
        var policies = [Int]()
        while answered.get("heavy") == nil && waited < 2400 {
            policies = Self.childPolicies(of: server)
            if !policies.isEmpty && policies.allSatisfy({ $0 == 5 }) { break }
            usleep(50_000)
            waited += 1
        }
        #expect(!policies.isEmpty && policies.allSatisfy { $0 == 5 }, "\(policies)")
        while answered.get("heavy") == nil && waited < 2400 {
            usleep(50_000)
            waited += 1
        }
        let (status, body) = try #require(answered.get("heavy"))
        #expect(status == 422 && body.contains("took longer than 15 s to draw page 1"), "\(status) \(body)")
        #expect(Self.children(of: server) == 0, "the child is gone")
        // Asked again (at this or a higher resolution): answered from memory, nothing drawn.
        for dpi in [50, 200] {
            let again = try fetch(server.url + "/api/books/1/pages/1.png?dpi=\(dpi)")
            #expect(again.0 == 422 && again.1.contains("took longer"), "\(again)")
        }
        #expect(Self.children(of: server) == 0)
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.said)")
    }

    @Test(Prerequisite.needs(ServeTests.curl, "needs curl"))
    func withLongRendersLeftAtTheirPriorityPagesAreDrawnAsBefore() throws {
        let box = try Self.heavyLibrary()
        let server = try RunningServer(box, [], environment: ["MARGIN_PLAIN": "idle-renders"])
        for _ in 0..<2 { #expect(try fetch(server.url + "/api/books/2/pages/1.png?dpi=30").0 == 200) }
        #expect(try fetch(server.url + "/api/books/2").0 == 200)
        #expect(Self.childPolicies(of: server).isEmpty, "no child left")
        let stopped = server.stop()
        #expect(stopped.status == 0, "\(stopped.said)")
    }

    @Test(Prerequisite.needs(ServeTests.curl, "needs curl"))
    func aRenderStopsWhenItsClientLeavesAndTheServerStopsWhenAsked() throws {
        let box = try Self.heavyLibrary()
        // A limit far beyond the test: only leaving, or stopping, ends these renders.
        let server = try RunningServer(box, [], environment: ["MARGIN_POPPLER_TIMEOUT": "600"])
        _ = try? fetch(server.url + "/api/books/1/pages/1.png?dpi=40", maxTime: 2)
        var waited = 0
        while Self.children(of: server) > 0 && waited < 200 {
            usleep(50_000)
            waited += 1
        }
        #expect(Self.children(of: server) == 0, "the render was stopped when its client left")
        // Four heavy pages asked at once: at most one render a core runs; the rest wait.
        let cores = ProcessInfo.processInfo.activeProcessorCount
        for dpi in 41...44 {
            Thread { _ = try? fetch(server.url + "/api/books/1/pages/1.png?dpi=\(dpi)", maxTime: 600) }.start()
        }
        waited = 0
        while Self.children(of: server) < min(4, cores) && waited < 600 {
            usleep(50_000)
            waited += 1
        }
        var most = 0
        for _ in 0..<20 {
            most = max(most, Self.children(of: server))
            usleep(100_000)
        }
        #expect(most == min(4, cores), "renders at once: \(most), cores: \(cores)")
        // Renders under way, then SIGTERM: the server stops (before the fix, only kill -9 did).
        kill(server.process.processIdentifier, SIGTERM)
        var seconds = 0.0
        while server.process.isRunning && seconds < 60 {
            usleep(100_000)
            seconds += 0.1
        }
        #expect(!server.process.isRunning, "still running 60 s after SIGTERM")
    }

    /// The states of `server`'s children (/proc/PID/stat, field 3: "T" stopped), by pid.
    static func childStates(of server: RunningServer) -> [Int32: Substring] {
        Dictionary(
            uniqueKeysWithValues: childPids(of: server).compactMap { pid in
                statFields("/proc/\(pid)/stat").flatMap { $0.first }.map { (pid, $0) }
            })
    }

    /// Two pages still drawing after a second take turns: one draws, the other waits stopped,
    /// and goes on once the first ends (here: its client leaves).
    @Test(Prerequisite.needs(ServeTests.curl, "needs curl"))
    func longRendersTakeTurns() throws {
        let cores = ProcessInfo.processInfo.activeProcessorCount
        let box = try Self.heavyLibrary()
        let server = try RunningServer(box, [], environment: ["MARGIN_POPPLER_TIMEOUT": "600"])
        defer { _ = server.stop() }
        // The first client, ended by the test (curl killed: the connection closes).
        let (first, drawing) = try Self.startRender(server, dpi: 41)
        usleep(300_000)
        Thread { _ = try? fetch(server.url + "/api/books/1/pages/1.png?dpi=42", maxTime: 600) }.start()
        guard cores >= 2 else {
            // One core: one render at a time anyway, the second waits for the core.
            kill(first.processIdentifier, SIGKILL)
            return
        }
        var states = [Int32: Substring]()
        var waited = 0
        while waited < 600 {
            states = Self.childStates(of: server)
            if states.count == 2 && states.values.contains("T") { break }
            usleep(50_000)
            waited += 1
        }
        #expect(
            states.count == 2 && states[drawing] != "T" && states.values.filter { $0 == "T" }.count == 1, "\(states)")
        // The first client leaves: its render is killed and the stopped one goes on.
        kill(first.processIdentifier, SIGKILL)
        first.waitUntilExit()
        waited = 0
        while waited < 600 {
            states = Self.childStates(of: server)
            if states.count == 1 && !states.values.contains("T") { break }
            usleep(50_000)
            waited += 1
        }
        #expect(states.count == 1 && states[drawing] == nil && !states.values.contains("T"), "\(states)")
    }

    /// A page still drawing after a second waits, stopped, while the server answers anything
    /// else (here a search that runs to its 5 s limit), and goes on once it has answered.
    @Test(Prerequisite.needs(ServeTests.curl, "needs curl"))
    func aLongRenderWaitsWhileAnotherRequestIsAnswered() throws {
        let box = try Self.heavyLibrary()
        let page = box.folder.path + "/zap.pdf"
        #expect(
            SmallDisk.shell(
                "python3 '\(Fixtures.root)/fixtures/make-fixtures.py' --text '\(page)' '\(String(repeating: "zap ", count: 60))'"
            ) == 0)
        try box.ok("add", page)
        let server = try RunningServer(box, [], environment: ["MARGIN_POPPLER_TIMEOUT": "600"])
        defer { _ = server.stop() }
        let (client, drawing) = try Self.startRender(server, dpi: 43)
        defer {
            kill(client.processIdentifier, SIGKILL)
            client.waitUntilExit()
        }
        // Past a second: a long render, drawing while nothing else is asked.
        usleep(1_500_000)
        #expect(Self.childStates(of: server)[drawing].map { $0 != "T" } == true)
        final class Answer: @unchecked Sendable { var status = 0 }
        let answer = Answer()
        let search = Thread {
            answer.status = (try? fetch(server.url + "/api/search?regex=1&q=%28%28zap%20%3F%29%2B%29%2Bq"))?.0 ?? -1
        }
        search.start()
        var stopped = false
        var waited = 0
        while !stopped && waited < 80 {
            stopped = Self.childStates(of: server)[drawing] == "T"
            usleep(50_000)
            waited += 1
        }
        #expect(stopped, "the render went on drawing while the search was answered")
        waited = 0
        while answer.status == 0 && waited < 400 {
            usleep(50_000)
            waited += 1
        }
        #expect(answer.status == 503)
        var going = false
        waited = 0
        while !going && waited < 100 {
            going = Self.childStates(of: server)[drawing].map { $0 != "T" } == true
            usleep(50_000)
            waited += 1
        }
        #expect(going, "the render did not go on once the search was answered")
    }

    @Test(Prerequisite.needs(ServeTests.curl, "needs curl"))
    func aSearchInTheServerHasATimeLimit() throws {
        let box = Sandbox()
        let page = box.folder.path + "/zap.pdf"
        // A page of "zap zap zap …": the pattern below tries every way to split it.
        let text = String(repeating: "zap ", count: 60)
        #expect(SmallDisk.shell("python3 '\(Fixtures.root)/fixtures/make-fixtures.py' --text '\(page)' '\(text)'") == 0)
        try box.ok("add", page)
        // The CLI's own limit is 20 s; the server's is shorter.
        let server = try RunningServer(box)
        let query = "%28%28zap%20%3F%29%2B%29%2Bq"  // ((zap ?)+)+q
        let (status, body) = try fetch(server.url + "/api/search?regex=1&q=" + query)
        #expect(status == 503 && body.contains("took longer than 5 s"), "\(status) \(body)")
        #expect(try fetch(server.url + "/api/books").0 == 200)
        _ = server.stop()
    }
}

/// Answers gathered from other threads.
final class Answers: @unchecked Sendable {
    private let lock = NSLock()
    private var answers = [String: (Int, String)]()
    func set(_ key: String, _ value: (Int, String)?) { lock.withLock { answers[key] = value ?? (0, "") } }
    func get(_ key: String) -> (Int, String)? { lock.withLock { answers[key] } }
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

    @Test(Prerequisite.needs(chromium, "needs chromium, chromium-driver and selenium (make test installs them)"))
    func inChromium() throws { try readSelectHighlightNoteBookmarkAndSearch(in: "chromium") }

    @Test(Prerequisite.needs(firefox, "needs firefox-esr and marionette-driver (make test installs them)"))
    func inFirefox() throws { try readSelectHighlightNoteBookmarkAndSearch(in: "firefox") }

    /// The same on a scanned copy of the book: its text layer is what OCR read.
    @Test(
        Prerequisite.needs(chromium, "needs chromium, chromium-driver and selenium (make test installs them)"),
        Scans.needs)
    func onAScannedBookInChromium() throws {
        try readSelectHighlightNoteBookmarkAndSearch(in: "chromium", scanned: true)
    }

    /// Select a sentence and press h, add a note and a bookmark, search and follow a hit, turn a
    /// page; scroll a long book from page 1 to 40 and back; zoom to 200 % and highlight there;
    /// edit a note and a colour; follow the outline and a printed page label; search with a
    /// non-ASCII word from the library and the book and step through the matches. Then check
    /// through the CLI that each highlight holds exactly its text, page and the rects the CLI
    /// itself places on that text (at any zoom).
    func readSelectHighlightNoteBookmarkAndSearch(in browser: String, scanned: Bool = false) throws {
        let sentence = "An inverted index maps each word"
        let zoomed = "Readers have always written in the margins"
        let box = Sandbox()
        try box.ok("add", scanned ? Scans.path("scan-clean.pdf") : Fixtures.pdf("sample.pdf"))
        try box.ok("add", Fixtures.pdf("prose.pdf"))
        let long = box.folder.path + "/long.pdf"
        try Fixtures.makeLong(long, pages: 45)
        try box.ok("add", long)
        try box.ok("add", Fixtures.pdf("outlined.pdf"))
        try box.ok("add", Fixtures.pdf("paper-arxiv.pdf"))
        let server = try RunningServer(box)
        let screenshot = box.folder.path + "/reader.png"
        var config: [String: Any] = [
            "url": server.url, "book": 1, "page": 2, "sentence": sentence, "search": "zebra",
            "note": "a note from the browser", "screenshot": screenshot, "hyphenated": 2,
        ]
        if !scanned {
            config["long"] = 3
            config["zoomed"] = ["book": 1, "page": 1, "sentence": zoomed]
            config["outline"] = ["book": 4, "entry": "1.2 Scope", "page": 4]
            config["labels"] = ["book": 4, "label": "A-1", "page": 6]
            config["words"] = [
                "home": "Müller annotations", "book": 5, "query": "Müller highlights", "steps": "highlight",
            ]
        }
        let configPath = box.folder.path + "/reader.json"
        try JSONSerialization.data(withJSONObject: config).write(to: URL(fileURLWithPath: configPath))
        let (status, output, said) = try runBrowserScript([Self.script, browser, configPath])
        _ = server.stop()
        #expect(status == 0, "\(said)")
        let report = try #require(try JSONSerialization.jsonObject(with: output) as? [String: Any], "\(said)")
        #expect(report["in_view"] as? Int == 2 && report["hash"] as? String == "page=2", "\(report)")
        #expect(report["layer_page"] as? String == "2")
        #expect(report["toolbar"] as? Bool == true, "a selection shows its toolbar")
        #expect(report["memo_beside"] as? String == "a note from the browser", "\(report)")
        // A removal waits for an Undo (see the script): hidden meanwhile, kept when undone.
        #expect(report["hidden_while_pending"] as? [Int] == [0, 0], "\(report)")
        #expect((report["kept"] as? [Int])?.allSatisfy { $0 >= 1 } == true, "\(report)")
        #expect(report["bookmarks_after_removal"] as? Int == 0, "\(report)")
        // Selection as in a PDF viewer: a word, a line; a copy puts a space at a line end and
        // joins a word hyphenated across one.
        #expect(report["double_click"] as? String == "inverted", "\(report)")
        #expect(
            (report["triple_click"] as? String)?.trimmingCharacters(in: .whitespacesAndNewlines)
                == "An inverted index maps each word to the pages that hold it.", "\(report)")
        #expect((report["copy_selected"] as? String)?.contains("\n") == true, "\(report)")
        #expect(report["copied"] as? String == "fast. An inverted", "\(report)")
        #expect(report["hyphen_selected"] as? String == "The com-\nputer is", "\(report)")
        #expect(report["hyphen_copied"] as? String == "The computer is", "\(report)")
        #expect(report["help_open"] as? Bool == true)
        #expect(report["hit"] as? String == "p. 3")
        #expect(report["followed_to"] as? Int == 3)
        #expect((report["found"] as? String)?.lowercased() == "zebra", "the hit is marked on its page")
        #expect(report["after_arrow"] as? Int == 2 && report["hash_after_arrow"] as? String == "page=2", "\(report)")
        #expect(report["after_back"] as? Int == 3, "Back returns to the page left: \(report)")
        #expect(report["page_errors"] is NSNull, "no script errors: \(report)")
        if browser == "chromium" { #expect((report["console_errors"] as? [String]) == [], "no console errors") }
        #expect(FileManager.default.fileExists(atPath: screenshot))
        if !scanned {
            // Continuous pages: all laid out from the start, drawn as they come, emptied when far.
            #expect(report["long_pages"] as? Int == 45, "\(report)")
            #expect(report["placeholders_sized"] as? Bool == true)
            #expect(report["scroll_height_at_start"] as? Int == report["scroll_height_at_end"] as? Int, "\(report)")
            #expect(report["drawn"] as? Int == 78 && report["back_at"] as? Int == 1, "\(report)")
            #expect((report["loaded_at_40"] as? Int).map { $0 > 0 && $0 <= 12 } == true, "\(report)")
            #expect(report["page_1_emptied"] as? Bool == true, "\(report)")
            // Zoom: the page twice as wide, drawn at twice the resolution.
            #expect(report["zoom"] as? String == "200", "\(report)")
            if browser == "chromium" { #expect(report["pinch"] as? String == "150", "a pinch zooms: \(report)") }
            // w, p, Ctrl 0: fit width (the widest), fit page (no wider), automatic (no wider than the width).
            let fits = (report["fits"] as? [[Any]] ?? []).map { ($0.first as? String ?? "", $0.last as? Int ?? 0) }
            #expect(fits.map(\.0) == ["width", "page", "auto"], "\(report)")
            if fits.count == 3 { #expect(fits[1].1 <= fits[0].1 && fits[2].1 <= fits[0].1, "\(fits)") }
            let widths = report["zoom_width"] as? [Int] ?? []
            #expect(widths.count == 2 && widths[1] == 1632, "612 pt at 200 % (96 px an inch) is 1632 px: \(report)")
            #expect(report["zoom_pixels"] as? Int == 1632, "drawn at 192 dpi, 1632 pixels wide: \(report)")
            #expect(report["zoom_selected"] as? String == zoomed, "\(report)")
            #expect(
                report["note_kept"] as? [AnyHashable] == ["an edited note", 1], "a note being written outlives a redraw"
            )
            #expect(report["edited_note"] as? String == "an edited note", "\(report)")
            #expect(report["edited_color"] as? String == "#5fb236", "\(report)")
            #expect(report["filtered"] as? [String] == ["highlight"], "\(report)")
            if browser == "chromium" {
                // At 390 px: a list, nothing wider than the screen, the sidebar closed, a short bar.
                let library = report["narrow_library"] as? [AnyHashable] ?? []
                #expect(
                    library.count == 2 && (library[0] as? Int ?? 999) <= 390 && library[1] as? String == "block",
                    "\(report)")
                let reader = report["narrow_reader"] as? [AnyHashable] ?? []
                #expect(reader.count == 3 && (reader[0] as? Int ?? 999) <= 390, "\(report)")
                #expect((reader.count == 3 ? reader[1] as? Int : nil).map { $0 <= 160 } == true, "\(report)")
                #expect(reader.count == 3 && reader[2] as? Bool == true, "\(report)")
            }
            #expect(
                report["outline_to"] as? Int == 4 && report["outline_current"] as? String == "1.2 Scope", "\(report)")
            #expect(
                report["thumbnails"] as? [AnyHashable] == [6, "2"], "six pages, page 4 (printed 2) in view: \(report)")
            #expect(report["thumbnail_to"] as? Int == 2, "\(report)")
            #expect(report["label_shown"] as? String == "i" && report["label_to"] as? Int == 6, "\(report)")
            // A query with a space and a non-ASCII word, from the library's form (the browser
            // encodes the space as '+') and in the book; every term marked.
            #expect((report["form_url"] as? String)?.contains("q=M%C3%BCller+annotations") == true, "\(report)")
            #expect((report["form_hits"] as? Int ?? 0) >= 1, "\(report)")
            let formMarked = Set((report["form_marked"] as? [String] ?? []).map { $0.lowercased() })
            #expect(formMarked.contains("müller") && formMarked.contains("annotations"), "\(report)")
            #expect(report["book_hits"] as? [String] == ["p. 101"], "printed page labels: \(report)")
            #expect(Set(report["book_marked"] as? [String] ?? []).isSuperset(of: ["Müller"]), "\(report)")
            // n n N: in page order, across pages, and back.
            let steps = (report["steps"] as? [[Int]]) ?? []
            #expect(steps.count == 4, "\(report)")
            if steps.count == 4 {
                #expect(steps[0][0] == 1 && steps[1][0] == 1 && steps[2][0] == 2, "\(steps)")
                #expect(steps[1][1] > steps[0][1] && steps[3] == steps[1], "\(steps)")
            }
        }

        let highlights = try #require(try box.ok("highlight", "list", "--json").json() as? [[String: Any]])
        #expect(highlights.count == (scanned ? 1 : 2))
        let highlight = try #require(highlights.first { $0["page"] as? Int == 2 })
        #expect(highlight["text"] as? String == sentence)
        let other = Sandbox()
        try other.ok("add", Fixtures.pdf("sample.pdf"))
        let placed = try #require(
            try other.ok("highlight", "add", "1", "--text", sentence, "--page", "2", "--json").json()
                as? [[String: Any]])
        let rects = try #require(highlight["rects"] as? [[Double]])
        let expected = try #require(placed.first?["rects"] as? [[Double]])
        if scanned {
            // Placed on the words OCR read: where the born-digital page has them.
            #expect(rects.count == expected.count)
            for (a, b) in zip(rects, expected) {
                let shared = max(0, min(a[2], b[2]) - max(a[0], b[0])) * max(0, min(a[3], b[3]) - max(a[1], b[1]))
                let union = (a[2] - a[0]) * (a[3] - a[1]) + (b[2] - b[0]) * (b[3] - b[1]) - shared
                #expect(shared / union >= 0.6, "\(a) against \(b)")
            }
        } else {
            #expect(rects == expected)
            // Made at 200 %: the same text and rects the CLI places at any size; its note and
            // colour as edited in the sidebar.
            let made = try #require(highlights.first { $0["page"] as? Int == 1 })
            #expect(made["text"] as? String == zoomed)
            #expect(made["note"] as? String == "an edited note" && made["color"] as? String == "#5fb236", "\(made)")
            let atAnySize = try #require(
                try other.ok("highlight", "add", "1", "--text", zoomed, "--page", "1", "--json").json()
                    as? [[String: Any]])
            #expect(made["rects"] as? [[Double]] == atAnySize.first?["rects"] as? [[Double]])
        }
        let bookmarks = try #require(try box.ok("bookmark", "list", "--json").json() as? [[String: Any]])
        #expect(bookmarks.map { $0["page"] as? Int } == [2])
        if !scanned { #expect(bookmarks.map { $0["label"] as? String } == ["chapter two"], "renamed in the sidebar") }
        let memos = try #require(try box.ok("memo", "list", "--json").json() as? [[String: Any]])
        #expect(memos.map { $0["text"] as? String } == ["a note from the browser"])
        #expect(memos.map { $0["page"] as? Int } == [2])
    }
}

/// A book's page lists its annotations' pages as the book prints them (as the reader does).
@Suite struct BookPageLabelTests {
    @Test(Prerequisite.needs(ServeTests.curl, "needs curl"))
    func annotationsAreListedWithPrintedPageNumbers() throws {
        let box = Sandbox()
        try box.ok("add", Fixtures.pdf("paper-arxiv.pdf"))
        try box.ok("highlight", "add", "1", "--text", "Readers mark", "--page", "1")
        let server = try RunningServer(box)
        defer { _ = server.stop() }
        let (status, page) = try fetch(server.url + "/books/1")
        #expect(status == 200 && page.contains("href=\"/books/1/pages/1\">p. 101</a>"), "\(page)")
    }
}

/// What a book's PDF can't give (its password unknown here) is said as the CLI says it, with
/// what to do, and with a status that says it is the book's state (422), not a server failure.
@Suite struct ServePDFErrorTests {
    @Test(Prerequisite.needs(ServeTests.curl, "needs curl"))
    func anEncryptedBookWithoutItsPasswordIsA422WithTheRemedy() throws {
        let first = Sandbox()
        try first.ok("add", "-q", Fixtures.pdf("encrypted.pdf"), "--password", "secret")
        let backup = first.folder.path + "/backup.json"
        try first.ok("export", "--all", "--format", "json", "-o", backup)
        // Restored elsewhere, the PDF fetched again from where it came: no password (backups
        // carry none).
        let box = Sandbox()
        try box.ok("import", "-q", backup)
        try box.ok("fetch", "1")
        let server = try RunningServer(box)
        defer { _ = server.stop() }
        for path in ["/api/books/1/pages/1/text", "/api/books/1/pages/1.png?dpi=50"] {
            let (status, body) = try fetch(server.url + path)
            #expect(status == 422, "\(path): \(status) \(body)")
            #expect(body.contains("--password -"), "\(path): \(body)")
        }
        let (pageStatus, page) = try fetch(server.url + "/books/1/pages/1")
        #expect(pageStatus == 200, "the reader's page itself opens: \(page)")
    }
}

import Foundation
import MarginCore
import TestSupport
import Testing

/// The team helper (`MARGIN_TEAM_HELPER`): a `margin-full` kept running for a team library that
/// answers its reading commands with the library open. Real helper processes, a real cluster.
@Suite struct TeamHelperTests {
    /// A team library with two books, and a way to run margin on it with the helper on.
    struct Team {
        let box = Sandbox()
        let url: String
        /// The helper on, waiting 12 s for a command (the tests stop it themselves).
        let on = ["MARGIN_TEAM_HELPER": "0.2"]

        init() throws {
            url = try TestCluster.freshDatabase()
            let made = try box.margin.run(
                ["add", "-q", Fixtures.pdf("sample.pdf"), Fixtures.pdf("second.pdf")],
                environment: ["MARGIN_LIBRARY": url])
            #expect(made.status == 0, "\(made)")
            let marked = try box.margin.run(
                ["highlight", "add", "1", "--text", "inverted index", "--note", "the index"],
                environment: ["MARGIN_LIBRARY": url])
            #expect(marked.status == 0, "\(marked)")
        }

        func run(_ arguments: [String], _ extra: [String: String] = [:]) throws -> RunResult {
            try box.margin.run(arguments, environment: ["MARGIN_LIBRARY": url].merging(extra) { $1 })
        }

        /// What `db status` says of the helper with these settings, if one runs.
        func helper(_ settings: [String: String]) throws -> [String: Any]? {
            let status = try run(["db", "status", "--json"], settings)
            #expect(status.status == 0, "\(status)")
            return (try status.json() as? [String: Any])?["helper"] as? [String: Any]
        }

        /// The helper running with the helper on (`on`): its pid and its socket (its last argument).
        func runningHelper() throws -> (pid: Int, socket: String) {
            let helper = try #require(try waitForHelper(on))
            let pid = try #require(helper["pid"] as? Int)
            let arguments = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8).split(separator: "\0")
            return (pid, String(try #require(arguments.last)))
        }

        /// Waits (up to 20 s) for a helper with these settings to answer, other than `not`.
        func waitForHelper(_ settings: [String: String], not old: Int? = nil) throws -> [String: Any]? {
            for _ in 0..<200 {
                if let helper = try helper(settings), helper["pid"] as? Int != old { return helper }
                Thread.sleep(forTimeInterval: 0.1)
            }
            return nil
        }
    }

    /// Stops a helper a test started, only while the process at `pid` is one: a helper that
    /// stopped by itself leaves its pid to any process or thread (`kill` of a thread's id
    /// signals its whole process, this test run's too).
    static func stopHelper(_ pid: Int?) {
        guard let pid, pid > 1,
            let line = try? String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8),
            line.contains(" __team-helper".replacingOccurrences(of: " ", with: "\u{0}"))
        else { return }
        kill(pid_t(pid), SIGKILL)
    }

    /// The commands compared: as margin-full answers them, then as the helper does.
    static let commands: [[String]] = [
        ["search", "inverted index", "--json"],
        ["search", "index"],
        ["--json", "list"],
        ["show", "1", "--json"],
        ["show", "999"],
        ["search", "zzzzqqq", "--json", "--suggest"],
        ["highlight", "list", "--json"],
        ["--json", "annotations", "1"],
        ["toc", "1"],
        ["cite", "1"],
        ["recent"],
    ]

    /// Output without the times a book was last opened (`show` sets them).
    static func steady(_ result: RunResult) -> RunResult {
        var result = result
        result.stdout = result.stdout.split(separator: "\n", omittingEmptySubsequences: false)
            .filter { !$0.contains("\"openedAt\"") }.joined(separator: "\n")
        return result
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func theHelperAnswersAsMarginFullWouldAndOnlyItsOwnSettings() throws {
        let team = try Team()
        let expected = try Self.commands.map { Self.steady(try team.run($0)) }
        #expect(expected.map(\.status) == [0, 0, 0, 0, 1, 0, 0, 0, 0, 0, 0], "\(expected)")
        #expect(try team.helper(team.on) == nil, "no helper unless asked")

        // The first command with the helper on runs as always and starts it.
        let first = Self.steady(try team.run(Self.commands[0], team.on))
        #expect(first.stdout == expected[0].stdout && first.status == 0)
        let started = try #require(try team.waitForHelper(team.on))
        let pid = try #require(started["pid"] as? Int)
        defer { Self.stopHelper(pid) }
        #expect(started["answered"] as? Int == 0)

        // Each command's output, errors and exit status exactly as margin-full's, and each
        // answered by the helper (it counts them).
        for (index, command) in Self.commands.enumerated() {
            let answered = Self.steady(try team.run(command, team.on))
            #expect(answered.status == expected[index].status, "\(command): \(answered)")
            #expect(answered.stdout == expected[index].stdout, "\(command)")
            #expect(answered.stderr == expected[index].stderr, "\(command)")
        }
        #expect(try team.helper(team.on)?["answered"] as? Int == Self.commands.count)
        // What it can't parse, it leaves to margin-full, which says what is wrong.
        let wrong = try team.run(["search", "--bogus", "x"], team.on)
        #expect(wrong.status != 0 && wrong.stderrLines.first?.hasPrefix("error: ") == true, "\(wrong)")
        // A command of another kind is not handed to it (margin-full runs it).
        #expect(try team.run(["db", "status"], team.on).status == 0)
        #expect(try team.helper(team.on)?["answered"] as? Int == Self.commands.count)

        // Another setting is another helper: this one answers none of those commands.
        let other = team.on.merging(["MARGIN_RETRIES": "1"]) { $1 }
        #expect(Self.steady(try team.run(["list", "--json"], other)).stdout == expected[2].stdout)
        #expect(try team.helper(team.on)?["answered"] as? Int == Self.commands.count)
        Self.stopHelper(try team.waitForHelper(other)?["pid"] as? Int)

        // Its socket: in a folder of this user's alone, itself the user's alone.
        let arguments = try String(contentsOfFile: "/proc/\(pid)/cmdline", encoding: .utf8).split(separator: "\0")
        let socket = String(try #require(arguments.last))
        let folder = (socket as NSString).deletingLastPathComponent
        let folderMode = try FileManager.default.attributesOfItem(atPath: folder)[.posixPermissions] as? Int
        let socketMode = try FileManager.default.attributesOfItem(atPath: socket)[.posixPermissions] as? Int
        #expect(folderMode == 0o700 && socketMode == 0o600, "\(folder): \(String(folderMode ?? 0, radix: 8))")

        // Killed: the next command runs as always, and starts a new helper in its place.
        Self.stopHelper(pid)
        Thread.sleep(forTimeInterval: 0.2)
        let after = Self.steady(try team.run(Self.commands[2], team.on))
        #expect(after.status == 0 && after.stdout == expected[2].stdout, "\(after)")
        let replaced = try #require(try team.waitForHelper(team.on, not: pid))
        defer { Self.stopHelper(replaced["pid"] as? Int) }
        #expect(Self.steady(try team.run(Self.commands[3], team.on)).stdout == expected[3].stdout)
        #expect(try team.helper(team.on)?["answered"] as? Int == 1)
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func aHostileClientNeitherStopsNorMisleadsTheHelper() throws {
        let team = try Team()
        #expect(try team.run(["list"], team.on).status == 0)
        let (pid, socket) = try team.runningHelper()
        defer { Self.stopHelper(pid) }
        // A length past the limit, bytes that aren't JSON, a command it doesn't answer, a client
        // that says nothing, one that closes at once, a request without descriptors.
        let script = """
            import json, socket, struct, sys, time
            def client(payload, wait=True):
                s = socket.socket(socket.AF_UNIX)
                s.connect(sys.argv[1])
                if not wait:
                    s.close()
                    return b""
                s.recv(1)
                if payload is not None: s.sendall(payload)
                s.settimeout(5)
                try: got = s.recv(16)
                except OSError: got = b"?"
                s.close()
                return got
            def framed(obj):
                body = json.dumps(obj).encode()
                return struct.pack(">I", len(body)) + body
            answers = [
                client(struct.pack(">I", 0xFFFFFFF0) + b"x" * 64),
                client(struct.pack(">I", 10) + b"not json!!"),
                client(framed({"arguments": ["add", "/etc/passwd"], "directory": "/"})),
                client(None),
                client(None, wait=False),
                client(framed({"arguments": ["list"], "directory": "/"})),
            ]
            print(json.dumps([a.decode("latin-1") for a in answers]))
            """
        let said = try runProcess("/usr/bin/python3", ["-c", script, socket], timeout: 60)
        #expect(said.status == 0, "\(said)")
        // None of them ran anything ("S": refused, or no answer), and the helper still answers.
        let answers = try #require(try JSONSerialization.jsonObject(with: Data(said.stdout.utf8)) as? [String])
        #expect(answers.allSatisfy { $0 == "" || $0 == "S" || $0 == "?" }, "\(answers)")
        #expect(FileManager.default.fileExists(atPath: "/proc/\(pid)/cmdline"), "the helper still runs")
        #expect(try team.run(["list", "--json"], team.on).status == 0)
        #expect(try team.helper(team.on)?["answered"] as? Int == 1)
        #expect(try team.run(["list"]).stdout == (try team.run(["list"], team.on)).stdout)
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func theHelperKeepsNothingOfTheCommandThatStartedIt() throws {
        let team = try Team()
        // A caller waiting for a pipe it gave margin to be closed (as `$(…)` in a shell does):
        // margin ends, and the helper it started holds none of its descriptors.
        let settings = ["MARGIN_TEAM_HELPER": "0.21"]
        let script = """
            import os, select, subprocess, sys
            r, w = os.pipe()
            done = subprocess.run(sys.argv[1:], pass_fds=[w], capture_output=True)
            os.close(w)
            ready = select.select([r], [], [], 10)[0]
            print(done.returncode, "closed" if ready and os.read(r, 1) == b"" else "held open")
            """
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "MALLOC_ARENA_MAX")
        environment.merge(
            ["MARGIN_HOME": team.box.home, "HOME": team.box.home + "/user-home", "MARGIN_LIBRARY": team.url]
                .merging(settings) { $1 }
        ) { $1 }
        let said = try runProcess(
            "/usr/bin/python3", ["-c", script, MarginRunner.binary, "list"], environment: environment, timeout: 60)
        let helper = try #require(try team.waitForHelper(settings))
        let pid = try #require(helper["pid"] as? Int)
        defer { Self.stopHelper(pid) }
        #expect(said.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "0 closed", "\(said)")
        let held = try FileManager.default.contentsOfDirectory(atPath: "/proc/\(pid)/fd").compactMap { name in
            try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/fd/\(name)")
        }
        #expect(!held.contains { $0.hasPrefix("pipe:") }, "\(held)")
        // Nor its working folder: the helper waits in /.
        #expect(try FileManager.default.destinationOfSymbolicLink(atPath: "/proc/\(pid)/cwd") == "/")
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func theHelperIsOnUnlessToldAndStopsWhenIdle() throws {
        let team = try Team()
        // Off: `0`, `off`, what is not a number, or `MARGIN_PLAIN=team-helper`.
        let offs: [[String: String]] = [
            ["MARGIN_TEAM_HELPER": "0"], ["MARGIN_TEAM_HELPER": "off"], ["MARGIN_TEAM_HELPER": "soon"],
            ["MARGIN_TEAM_HELPER": "", "MARGIN_PLAIN": "team-helper"],
        ]
        for off in offs { #expect(try team.run(["list"], off).status == 0) }
        Thread.sleep(forTimeInterval: 0.5)
        for off in offs { #expect(try team.helper(off) == nil, "\(off)") }
        // On when unset (empty here: the tests' runner turns it off): 10 minutes.
        let unset = ["MARGIN_TEAM_HELPER": ""]
        #expect(try team.run(["list"], unset).status == 0)
        let byDefault = try #require(try team.waitForHelper(unset))
        Self.stopHelper(byDefault["pid"] as? Int)
        #expect(byDefault["idleMinutes"] as? Double == 10)
        // Waiting 3 s for a command, it stops after them (and its socket goes).
        let brief = ["MARGIN_TEAM_HELPER": "0.05"]
        #expect(try team.run(["list"], brief).status == 0)
        let helper = try #require(try team.waitForHelper(brief))
        let pid = pid_t(try #require(helper["pid"] as? Int))
        // Gone, or a zombie no one reaped (its parent, margin-full, ended long ago).
        func running() -> Bool {
            guard let stat = try? String(contentsOfFile: "/proc/\(pid)/stat", encoding: .utf8) else { return false }
            return stat.split(separator: ")").last?.split(separator: " ").first != "Z"
        }
        var gone = false
        for _ in 0..<150 where !gone {
            Thread.sleep(forTimeInterval: 0.1)
            gone = !running()
        }
        if !gone { Self.stopHelper(Int(pid)) }
        #expect(gone, "the helper stopped after its idle time")
        #expect(try team.helper(brief) == nil)
    }

    @Test(
        Prerequisite.needs(TestCluster.available, "needs the cluster scripts/with-postgres.sh starts (make test does)"))
    func ctrlCStopsTheHelpersCommandAndOthersRunMeanwhile() throws {
        let team = try Team()
        // Enough hits to fill a pipe no one reads: the helper's command waits to write them.
        let folder = TemporaryFolder()
        let pdf = folder.path + "/many.pdf"
        try Fixtures.makePages(pdf, (1...80).map { "alpha page \($0) of a long book about the alphabet" })
        #expect(try team.run(["add", "-q", pdf]).status == 0)
        #expect(try team.run(["list"], team.on).status == 0)
        let (pid, socket) = try team.runningHelper()
        defer { Self.stopHelper(pid) }
        let script = """
            import fcntl, json, os, signal, socket, subprocess, sys, time
            r, w = os.pipe()
            fcntl.fcntl(w, 1031, 4096)  # F_SETPIPE_SZ: one page
            # Ctrl-C as a terminal gives it (a test runner may hand its children SIGINT ignored
            # or blocked).
            def default():
                signal.signal(signal.SIGINT, signal.SIG_DFL)
                signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGINT])
            margin = subprocess.Popen(sys.argv[3:], stdout=w, stderr=subprocess.DEVNULL, preexec_fn=default)
            os.close(w)
            time.sleep(2)
            waiting = margin.poll() is None
            # Busy: another margin hears so at once, and runs its command itself.
            other = socket.socket(socket.AF_UNIX)
            other.connect(sys.argv[2])
            other.settimeout(5)
            busy = other.recv(1).decode()
            other.close()
            listed = subprocess.run([sys.argv[3], "list"], capture_output=True).returncode
            # And says who is busy.
            status = subprocess.run([sys.argv[3], "db", "status", "--json"], capture_output=True, text=True)
            helper = json.loads(status.stdout)["helper"]
            busy = busy if helper == {"pid": int(sys.argv[1]), "busy": True} else helper
            margin.send_signal(signal.SIGINT)
            margin.wait(10)
            def running(pid):
                try: state = open(f"/proc/{pid}/stat").read().rsplit(")", 1)[1].split()[0]
                except OSError: return False
                return state != "Z"
            for _ in range(100):
                if not running(sys.argv[1]): break
                time.sleep(0.1)
            # The pipe is still open here: only the helper's own end stops its command.
            print(waiting, busy, listed, margin.returncode, "running" if running(sys.argv[1]) else "stopped")
            """
        var environment = ProcessInfo.processInfo.environment
        environment.removeValue(forKey: "MALLOC_ARENA_MAX")
        environment.merge(
            ["MARGIN_HOME": team.box.home, "HOME": team.box.home + "/user-home", "MARGIN_LIBRARY": team.url]
                .merging(team.on) { $1 }
        ) { $1 }
        let said = try runProcess(
            "/usr/bin/python3",
            ["-c", script, String(pid), socket, MarginRunner.binary, "search", "alpha", "--limit", "0", "--json"],
            environment: environment, timeout: 60)
        #expect(said.stdout.trimmingCharacters(in: .whitespacesAndNewlines) == "True B 0 -2 stopped", "\(said)")
        // The next command runs, and a new helper takes the old one's place.
        let listed = try team.run(["list", "--json"], team.on)
        #expect(listed.status == 0, "\(listed)")
        let replaced = try #require(try team.waitForHelper(team.on, not: pid))
        Self.stopHelper(replaced["pid"] as? Int)
    }
}

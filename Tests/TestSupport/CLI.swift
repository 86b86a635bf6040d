import Foundation

/// What one run of the `margin` binary did.
public struct RunResult: Sendable, CustomStringConvertible {
    public var status: Int32
    public var stdout: String
    public var stderr: String
    /// stdout as bytes, for binary output.
    public var stdoutData = Data()

    public var description: String { "exit \(status)\n--- stdout\n\(stdout)--- stderr\n\(stderr)" }

    public init(status: Int32, stdout: String, stderr: String, stdoutData: Data = Data()) {
        self.status = status
        self.stdout = stdout
        self.stderr = stderr
        self.stdoutData = stdoutData
    }

    /// stdout parsed as JSON.
    public func json() throws -> Any {
        try JSONSerialization.jsonObject(with: Data(stdout.utf8), options: [.fragmentsAllowed])
    }

    /// The non-empty lines of stderr.
    public var stderrLines: [String] { stderr.split(separator: "\n").map(String.init) }
}

/// Runs the built `margin` binary against one library folder.
public struct MarginRunner: Sendable {
    public let home: String

    public init(home: String) { self.home = home }

    /// The `margin` binary SwiftPM built next to the test bundle.
    public static let binary: String = {
        if let path = ProcessInfo.processInfo.environment["MARGIN_BIN"] { return path }
        var url = URL(fileURLWithPath: CommandLine.arguments[0]).resolvingSymlinksInPath()
        // The test runner lives in .build/<triple>/debug/ (possibly inside a .xctest bundle).
        while url.path != "/" {
            url.deleteLastPathComponent()
            let candidate = url.appendingPathComponent("margin").path
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return Fixtures.root + "/.build/debug/margin"
    }()

    /// Runs `margin ARGS` with `MARGIN_HOME` set to this runner's folder.
    @discardableResult
    public func run(
        _ arguments: [String], stdin: String? = nil, environment: [String: String] = [:], cwd: String? = nil,
        timeout: Double? = nil
    ) throws -> RunResult {
        var env = ProcessInfo.processInfo.environment
        env["MARGIN_HOME"] = home
        env["HOME"] = home + "/user-home"
        env.removeValue(forKey: "XDG_DATA_HOME")
        env.removeValue(forKey: "XDG_CACHE_HOME")
        // The test process's own malloc setting (see the Makefile's test target), not margin's.
        env.removeValue(forKey: "MALLOC_ARENA_MAX")
        // No team helper left running by a test unless it asks for one (`TeamHelperTests`).
        env["MARGIN_TEAM_HELPER"] = "0"
        for (key, value) in environment { env[key] = value }
        return try runProcess(Self.binary, arguments, stdin: stdin, environment: env, cwd: cwd, timeout: timeout)
    }

    public func run(_ arguments: String...) throws -> RunResult { try run(arguments) }
}

private let spawnLock = NSLock()

extension Process {
    /// `run()`, one start at a time across all tests of the process. The crash in
    /// `Process.run()` that this was first meant to avoid (memcpy past a buffer) is Foundation
    /// reading past glibc's readdir buffer, which one malloc arena makes harmless (the Makefile's
    /// test target); starts stay serialized all the same. The children still run at once.
    public func start() throws {
        spawnLock.lock()
        defer { spawnLock.unlock() }
        try run()
    }
}

private final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data = Data()
    func set(_ value: Data) { lock.lock(); data = value; lock.unlock() }
    func get() -> Data { lock.lock(); defer { lock.unlock() }; return data }
}

/// Runs a program to its end (margin, or a tool the tests compare with: psql, mutool, qpdf…)
/// with this environment (the test's own by default): both outputs are read as they come, so
/// neither can fill its pipe and stall it. Started with `posix_spawn`, not Foundation's
/// `Process.run()`, which reads past glibc's readdir buffer while it closes descriptors (a
/// crash of the whole test process, now and then): the child closes every descriptor above
/// stderr itself (`posix_spawn_file_actions_addclosefrom_np`), so none of another test's pipes
/// stays open in it.
public func runProcess(
    _ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil,
    cwd: String? = nil, timeout: Double? = nil
) throws -> RunResult {
    func pipePair() throws -> (read: Int32, write: Int32) {
        var fds: [Int32] = [-1, -1]
        guard pipe(&fds) == 0 else { throw POSIXError(POSIXErrorCode(rawValue: errno) ?? .EIO) }
        for fd in fds { _ = fcntl(fd, F_SETFD, FD_CLOEXEC) }
        return (fds[0], fds[1])
    }
    // A child that ends before reading its input makes the write fail, not end the tests.
    _ = ignoreBrokenPipes
    let input = try pipePair()
    let out = try pipePair()
    let err = try pipePair()
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_adddup2(&actions, input.read, 0)
    posix_spawn_file_actions_adddup2(&actions, out.write, 1)
    posix_spawn_file_actions_adddup2(&actions, err.write, 2)
    Spawning.closeFrom?(&actions, 3)
    if let cwd { _ = Spawning.changeDirectory?(&actions, cwd) }
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    let envp =
        (environment ?? ProcessInfo.processInfo.environment).map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer {
        for pointer in argv { free(pointer) }
        for pointer in envp { free(pointer) }
    }
    var pid: pid_t = 0
    let spawned = posix_spawn(&pid, executable, &actions, nil, argv, envp)
    for fd in [input.read, out.write, err.write] { close(fd) }
    guard spawned == 0 else {
        for fd in [input.write, out.read, err.read] { close(fd) }
        throw POSIXError(POSIXErrorCode(rawValue: spawned) ?? .EIO)
    }
    // The input written on a thread of its own: a child may answer before it reads it all.
    let feeder = Thread {
        if let stdin {
            let bytes = Array(stdin.utf8)
            var offset = 0
            while offset < bytes.count {
                let written = bytes.withUnsafeBytes { write(input.write, $0.baseAddress! + offset, $0.count - offset) }
                if written <= 0 { break }
                offset += written
            }
        }
        close(input.write)
    }
    feeder.start()
    let errData = LockedData()
    let readErrors = DispatchGroup()
    readErrors.enter()
    Thread {
        errData.set(readAll(err.read))
        readErrors.leave()
    }.start()
    // A hang is a failure the test should see, not a stuck suite: kill after `timeout`.
    let ended = LockedFlag()
    let child = pid
    if let timeout {
        DispatchQueue.global().asyncAfter(deadline: DispatchTime.now() + timeout) {
            if !ended.value { kill(child, SIGKILL) }
        }
    }
    let outData = readAll(out.read)
    readErrors.wait()
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 && errno == EINTR {}
    ended.value = true
    // As Foundation's `terminationStatus` says it: the exit code, or the signal that ended it.
    let code = (status & 0x7f) == 0 ? (status >> 8) & 0xff : status & 0x7f
    return RunResult(
        status: code, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData.get(), as: UTF8.self), stdoutData: outData)
}

private let ignoreBrokenPipes: Void = { signal(SIGPIPE, SIG_IGN) }()

/// Everything a descriptor gives until its end, then closed.
private func readAll(_ fd: Int32) -> Data {
    var data = Data()
    var buffer = [UInt8](repeating: 0, count: 65_536)
    while true {
        let count = buffer.withUnsafeMutableBytes { read(fd, $0.baseAddress, $0.count) }
        if count > 0 {
            data.append(contentsOf: buffer[0..<count])
        } else if count == 0 || errno != EINTR {
            break
        }
    }
    close(fd)
    return data
}

private final class LockedFlag: @unchecked Sendable {
    private let lock = NSLock()
    private var flag = false
    var value: Bool {
        get { lock.withLock { flag } }
        set { lock.withLock { flag = newValue } }
    }
}

/// glibc's spawn actions Swift's Glibc module leaves out, found by name.
private enum Spawning {
    typealias Actions = UnsafeMutablePointer<posix_spawn_file_actions_t>
    static let closeFrom: (@convention(c) (Actions, Int32) -> Int32)? = dlsym(
        nil, "posix_spawn_file_actions_addclosefrom_np"
    )
    .map { unsafeBitCast($0, to: (@convention(c) (Actions, Int32) -> Int32).self) }
    static let changeDirectory: (@convention(c) (Actions, UnsafePointer<CChar>) -> Int32)? = dlsym(
        nil, "posix_spawn_file_actions_addchdir_np"
    ).map { unsafeBitCast($0, to: (@convention(c) (Actions, UnsafePointer<CChar>) -> Int32).self) }
}

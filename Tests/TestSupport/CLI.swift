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
/// neither can fill its pipe and stall it.
public func runProcess(
    _ executable: String, _ arguments: [String], stdin: String? = nil, environment: [String: String]? = nil,
    cwd: String? = nil, timeout: Double? = nil
) throws -> RunResult {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let environment { process.environment = environment }
    if let cwd { process.currentDirectoryURL = URL(fileURLWithPath: cwd) }
    let out = Pipe()
    let err = Pipe()
    let input = Pipe()
    process.standardOutput = out
    process.standardError = err
    process.standardInput = input
    try process.start()
    if let stdin { input.fileHandleForWriting.write(Data(stdin.utf8)) }
    try? input.fileHandleForWriting.close()
    // Read both pipes concurrently so a large output can't block the child.
    let errData = LockedData()
    let group = DispatchGroup()
    group.enter()
    DispatchQueue.global().async {
        errData.set(err.fileHandleForReading.readDataToEndOfFile())
        group.leave()
    }
    // A hang is a failure the test should see, not a stuck suite: kill after `timeout`.
    if let timeout {
        DispatchQueue.global().asyncAfter(deadline: DispatchTime.now() + timeout) {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
        }
    }
    let outData = out.fileHandleForReading.readDataToEndOfFile()
    group.wait()
    process.waitUntilExit()
    return RunResult(
        status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
        stderr: String(decoding: errData.get(), as: UTF8.self), stdoutData: outData)
}

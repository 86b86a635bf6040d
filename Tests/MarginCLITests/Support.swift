import Foundation
import TestSupport
import Testing

/// One test's library: a temporary MARGIN_HOME and a runner for the built binary.
final class Sandbox: Sendable {
    let folder = TemporaryFolder()
    var home: String { folder.path + "/home" }
    var margin: MarginRunner { MarginRunner(home: home) }

    /// Runs margin and expects success.
    @discardableResult
    func ok(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> RunResult {
        try ok(arguments, sourceLocation: sourceLocation)
    }

    @discardableResult
    func ok(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> RunResult {
        let result = try margin.run(arguments)
        #expect(result.status == 0, "\(arguments): \(result)", sourceLocation: sourceLocation)
        return result
    }

    /// Runs margin and expects one `error:` line (after any `note:` lines) and a non-zero exit.
    @discardableResult
    func fails(_ arguments: String..., sourceLocation: SourceLocation = #_sourceLocation) throws -> RunResult {
        try fails(arguments, sourceLocation: sourceLocation)
    }

    @discardableResult
    func fails(_ arguments: [String], sourceLocation: SourceLocation = #_sourceLocation) throws -> RunResult {
        let result = try margin.run(arguments)
        #expect(result.status != 0, "\(arguments) should fail: \(result)", sourceLocation: sourceLocation)
        // Notes (a retry, say) may come first; then the one error line, then hints.
        let lines = result.stderrLines
        let first = lines.firstIndex { $0.hasPrefix("error: ") } ?? lines.count
        #expect(first < lines.count, "\(arguments): \(result)", sourceLocation: sourceLocation)
        #expect(
            lines[..<first].allSatisfy { $0.hasPrefix("note: ") }, "\(arguments): \(result)",
            sourceLocation: sourceLocation)
        #expect(
            result.stderr.components(separatedBy: "error: ").count == 2, "exactly one error line: \(result)",
            sourceLocation: sourceLocation)
        return result
    }

    /// What a terminal `columns` wide shows while margin runs with `arguments` (stdout and
    /// stderr both on it, through `script`), each line ended by the terminal's CR LF made LF.
    func onTerminal(_ arguments: [String], columns: Int = 120, environment: [String: String] = [:]) throws -> String {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/script")
        let command = ([MarginRunner.binary] + arguments).map { "'" + $0 + "'" }.joined(separator: " ")
        process.arguments = ["-qec", "stty cols \(columns); \(command)", "/dev/null"]
        process.environment = ProcessInfo.processInfo.environment.merging(["MARGIN_HOME": home]) { $1 }
            .merging(environment) { $1 }
        let out = Pipe()
        process.standardOutput = out
        process.standardInput = FileHandle.nullDevice
        try process.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        return String(decoding: data, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n")
    }

    /// `list --json` as objects.
    func books() throws -> [[String: Any]] {
        let result = try margin.run(["list", "--json"])
        return try #require(try result.json() as? [[String: Any]], "\(result)")
    }

    /// What a user could see change: the books as JSON and the files in the library folder.
    func snapshot() throws -> String {
        let listing = try margin.run(["list", "--json"]).stdout
        let files = folder.files().filter { !$0.hasSuffix("-wal") && !$0.hasSuffix("-shm") }
        return listing + files.joined(separator: "\n")
    }
}

extension Dictionary where Key == String, Value == Any {
    func string(_ key: String) -> String? { self[key] as? String }
    func int(_ key: String) -> Int? { self[key] as? Int }
}

import ArgumentParser
import Foundation
import MarginCore
import MarginKit

/// What the running executable can do besides a SQLite library on this machine.
///
/// Margin ships as two executables built from this one CLI: `margin` and, beside it,
/// `margin-full`, which adds downloads (AsyncHTTPClient), team libraries (PostgresNIO) and the
/// reader's server (Hummingbird). Those bring thousands of protocol conformances, and on Linux
/// every process scans all of a binary's conformances each time it first asks whether a type
/// conforms to a protocol (some 75 times in a search): without them `margin` starts faster.
/// `margin` runs the commands that need none of them and hands every other one to
/// `margin-full` with the same arguments (`exec`), before doing anything; help for every
/// command is answered by either.
public struct Services: Sendable {
    /// Makes the downloader (HTTP).
    public var downloader: (@Sendable (Configuration) -> any Downloader)?
    /// The backends for libraries on a server, by URL scheme (a team library on PostgreSQL).
    /// Where a backend author starts: a target of its own, its `LibraryBackend`, and one line
    /// registering it in `margin-full`'s main.
    public var backends: [LibraryBackend]
    /// Serves the reader: the library, how to listen and whom to answer, then what to do once bound.
    public var serve: (@Sendable (Library, ServeSettings, @escaping @Sendable (Int) -> Void) async throws -> Void)?

    public init(
        downloader: (@Sendable (Configuration) -> any Downloader)? = nil,
        backends: [LibraryBackend] = [],
        serve: (@Sendable (Library, ServeSettings, @escaping @Sendable (Int) -> Void) async throws -> Void)? = nil
    ) {
        self.downloader = downloader
        self.backends = backends
        self.serve = serve
    }

    /// Set once by `main`, before anything else runs.
    nonisolated(unsafe) public static var current = Services()

    var isFull: Bool { downloader != nil && !backends.isEmpty && serve != nil }

    /// The commands `margin` runs itself (the table's `runsHere`), and help and version.
    static let commandsRunHere =
        Margin.verbs.filter(\.runsHere).flatMap { verb in
            [verb.type.configuration.commandName].compactMap { $0 } + verb.type.configuration.aliases
        }
        + ["help", "--help", "-h", "--version"]

    static func runHere(_ verb: String) -> Bool {
        commandsRunHere.contains(verb) || verb.hasPrefix("--generate-completion") || verb.hasPrefix("---")
    }

    /// The name of the executable that can do everything.
    static let fullName = "margin-full"

    /// `margin-full`'s path: beside this executable.
    static func fullExecutable() -> String {
        let me =
            (try? FileManager.default.destinationOfSymbolicLink(atPath: "/proc/self/exe")) ?? CommandLine.arguments[0]
        return (me as NSString).deletingLastPathComponent + "/" + fullName
    }

    /// Replaces this process with `margin-full` (beside this executable), same arguments.
    static func runFull() -> Never {
        let full = fullExecutable()
        let arguments = CommandLine.arguments.map { strdup($0) } + [nil]
        execv(full, arguments)
        let reason = String(cString: strerror(errno))
        Console.error(
            "error: this command runs in \(fullName), which should be installed beside margin (\(full): \(reason))")
        exit(70)
    }
}

/// Thrown where `margin` meets something only `margin-full` can do: main hands the command over.
struct NeedsFullExecutable: Error {}

/// The downloader of an executable without one: asking it hands the command to `margin-full`.
struct NoDownloader: Downloader {
    func download(_ request: DownloadRequest) async throws -> DownloadResult { throw NeedsFullExecutable() }
    func fetch(_ url: String, accept: String, timeout: Double, maxSize: Int) async throws -> WebAnswer {
        throw NeedsFullExecutable()
    }
}

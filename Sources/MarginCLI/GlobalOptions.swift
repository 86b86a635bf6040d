import ArgumentParser
import Foundation
import MarginCore
import MarginKit
import MarginSQLite

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(
        name: .long,
        help: ArgumentHelp(
            "Keep the library in DIR (wins over $MARGIN_HOME), or use the team library at postgres://USER@HOST[:PORT]/DB, or postgres://USER@/DB?host=/SOCKET/FOLDER on this machine (also $MARGIN_LIBRARY; password from the URL or $PGPASSWORD).",
            valueName: "DIR|URL"))
    var library: String?

    @Flag(name: [.customShort("q"), .long], help: "No progress or chatter on stderr.")
    var quiet = false

    @Flag(name: .long, help: "Print exactly one JSON document on stdout.")
    var json = false

    @Flag(
        name: .long,
        help: "In a team library, also show the annotations other users shared (without it: only yours).")
    var allUsers = false

    /// Opens the library these options point at. It stays open until the process exits:
    /// closing SQLite connections checkpoints the WAL and syncs the disk, which would cost every
    /// read-only command several milliseconds; an exit without closing is as safe as a crash,
    /// which SQLite's WAL recovers from.
    /// Opens the library. Only a command that writes (`creating`) makes a library where there is
    /// none; the others read an absent one as empty, make nothing on disk, and say so. A folder
    /// is a SQLite library; a server's URL is opened by the backend registered for its scheme
    /// (`Services.backends`); the executable without backends hands such a command over.
    /// `readers`: connections reading side by side (a server's), on a SQLite library.
    func openLibrary(creating: Bool = false, readers: Int = 1) throws -> Library {
        let named = [library, environmentVariables["MARGIN_LIBRARY"]].compactMap { $0 }.first { !$0.isEmpty }
        let backends = Services.current.backends
        if let named, LibraryLocation.serverScheme(of: named) != nil, backends.isEmpty { throw NeedsFullExecutable() }
        let paths = try LibraryPaths.resolve(
            library: library, environment: environmentVariables, schemes: Set(backends.flatMap(\.schemes)))
        if !creating, !paths.location.isServer, !FileManager.default.fileExists(atPath: paths.database) {
            let folder = (paths.database as NSString).deletingLastPathComponent
            AbsentLibrary.shared.folder = folder
            // Said when the command ends well (a failure says it in its one error line).
            if !quiet {
                AbsentLibrary.shared.note =
                    "note: there is no library in \(folder) yet; 'margin add URL|PATH' makes one"
            }
            let library = Library(
                absentAt: paths, store: try LibraryDatabase(), configuration: Settings.configuration,
                downloader: NoDownloader())
            OpenLibraries.shared.keep(library)
            return library
        }
        let place = "\(paths.location) \(paths.database) \(allUsers) \(readers)"
        if paths.location.isServer, let open = OpenLibraries.shared.opened(place) { return open }
        let library = try Library(
            paths: paths,
            configuration: Settings.configuration,
            downloader: Services.current.downloader?(Settings.configuration) ?? NoDownloader()
        ) { [allUsers] database in
            guard case .server(let scheme, let url) = paths.location else {
                return try LibraryDatabase(path: database, readers: readers)
            }
            guard let backend = backends.first(where: { $0.schemes.contains(scheme) }) else {
                throw NeedsFullExecutable()
            }
            return try backend.open(url, environmentVariables["PGPASSWORD"], allUsers)
        }
        OpenLibraries.shared.keep(library)
        if paths.location.isServer { OpenLibraries.shared.keep(library, for: place) }
        return library
    }

    /// A message for a person, on stderr, unless --quiet.
    func note(_ message: String) {
        if !quiet { Console.error(message) }
    }
}

/// Where the library a command looked for and didn't find would be (for its errors' words).
final class AbsentLibrary: @unchecked Sendable {
    static let shared = AbsentLibrary()
    private let lock = NSLock()
    private var value: String?
    private var message: String?

    var folder: String? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }

    /// What to tell the user when the command has done, if anything.
    var note: String? {
        get { lock.withLock { message } }
        set { lock.withLock { message = newValue } }
    }
}

final class OpenLibraries: @unchecked Sendable {
    static let shared = OpenLibraries()
    /// Whether a library opened again is the one opened before (the team helper's commands
    /// share its connections), else each command opens its own.
    nonisolated(unsafe) static var keepsOpen = false
    private let lock = NSLock()
    private var libraries = [Library]()
    private var byPlace = [String: Library]()

    /// The library opened before for `place`, when libraries are kept open.
    func opened(_ place: String) -> Library? {
        guard Self.keepsOpen else { return nil }
        return lock.withLock { byPlace[place] }
    }

    /// Keeps a library for `place`, when libraries are kept open.
    func keep(_ library: Library, for place: String) {
        guard Self.keepsOpen else { return }
        lock.withLock { byPlace[place] = library }
    }

    func keep(_ library: Library) {
        lock.lock()
        libraries.append(library)
        lock.unlock()
    }

    /// Checkpoints the libraries this process wrote to, so each database file is whole by itself.
    func finishWriting() {
        lock.lock()
        let open = libraries
        lock.unlock()
        for library in open { library.database.finishWriting() }
    }
}

/// What the environment sets, read once for the whole run.
enum Settings {
    /// Read from the environment once; a command's own options (`--ocr`, say) change it before
    /// it opens the library.
    nonisolated(unsafe) static var configuration: Configuration = {
        var configuration = Configuration(environment: environmentVariables)
        // Text extraction runs in a child process of this executable, with limits.
        configuration.extractionHelper = executablePath()
        return configuration
    }()
}

import Foundation
import MarginCore

/// Where a library keeps its database and cache.
///
/// `--library DIR` wins over `MARGIN_HOME=DIR`; both put everything under DIR. Without either,
/// the XDG base directories are used.
public struct LibraryPaths: Sendable, Equatable {
    /// Where the library is: a folder, or a server.
    public let location: LibraryLocation
    /// The database: its file, or the server's URL.
    public let database: String
    /// The cache folder (`pdfs/`, `tmp/`).
    public let cache: String

    /// The key that seals stored PDF passwords: in the user's config folder, apart from the
    /// library, so a copy of the library alone holds no password in the clear.
    public let keyFile: String

    public init(database: String, cache: String, keyFile: String, location: LibraryLocation? = nil) {
        self.location = location ?? .folder((database as NSString).deletingLastPathComponent)
        self.database = database
        self.cache = cache
        self.keyFile = keyFile
    }

    /// `$XDG_CONFIG_HOME/margin/key`, by default `~/.config/margin/key`.
    public static func defaultKeyFile(environment: [String: String]) -> String {
        let userHome = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let config = environment["XDG_CONFIG_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? userHome + "/.config"
        return config + "/margin/key"
    }

    /// Everything under one folder: `DIR/library.sqlite` and `DIR/cache/`.
    public init(home: String, keyFile: String) {
        let root = absolutePath(home)
        self.init(database: root + "/library.sqlite", cache: root + "/cache", keyFile: keyFile)
    }

    /// Resolves the paths from the `--library` option and the environment: a folder (or
    /// `sqlite://FOLDER`), or a server's URL (also `MARGIN_LIBRARY`) whose scheme is one of
    /// `schemes` (a team library on `postgres://…`), whose PDFs this machine caches under
    /// `$XDG_CACHE_HOME/margin/team/` (or `$MARGIN_HOME/cache/team/`). Another scheme is an error.
    public static func resolve(library: String?, environment: [String: String], schemes: Set<String> = [])
        throws -> LibraryPaths
    {
        let keyFile = defaultKeyFile(environment: environment)
        let named =
            library.flatMap { $0.isEmpty ? nil : $0 } ?? environment["MARGIN_LIBRARY"].flatMap { $0.isEmpty ? nil : $0 }
        let location = try named.map { try LibraryLocation(parsing: $0, schemes: schemes) }
        if let named, let location, location.isServer {
            let userHome = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            let caches =
                environment["MARGIN_HOME"].flatMap { $0.isEmpty ? nil : $0 + "/cache" }
                ?? (environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? userHome + "/.cache")
                + "/margin"
            let components = URLComponents(string: named)
            let place = [components?.host ?? "", components?.port.map(String.init) ?? "5432", components?.path ?? ""]
                .joined(separator: "-").map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" }
            return LibraryPaths(
                database: named, cache: caches + "/team/" + String(place), keyFile: keyFile, location: location)
        }
        if case .folder(let folder)? = location, let named, LibraryLocation.serverScheme(of: named) == nil,
            named.contains("://")
        {
            return LibraryPaths(home: folder, keyFile: keyFile)
        }
        if let library, !library.isEmpty { return LibraryPaths(home: library, keyFile: keyFile) }
        if let home = environment["MARGIN_HOME"], !home.isEmpty { return LibraryPaths(home: home, keyFile: keyFile) }
        let userHome = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? userHome + "/.local/share"
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? userHome + "/.cache"
        return LibraryPaths(database: data + "/margin/library.sqlite", cache: cache + "/margin", keyFile: keyFile)
    }
}

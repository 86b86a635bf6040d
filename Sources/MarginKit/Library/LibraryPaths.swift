import Foundation
import MarginCore

/// Where a library keeps its database and cache.
///
/// `--library DIR` wins over `MARGIN_HOME=DIR`; both put everything under DIR. Without either,
/// the XDG base directories are used.
public struct LibraryPaths: Sendable, Equatable {
    /// The database file.
    public let database: String
    /// The cache folder (`pdfs/`, `tmp/`).
    public let cache: String

    /// The key that seals stored PDF passwords: in the user's config folder, apart from the
    /// library, so a copy of the library alone holds no password in the clear.
    public let keyFile: String

    public init(database: String, cache: String, keyFile: String) {
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
    /// `sqlite://FOLDER`), or a `postgres://` URL (also `MARGIN_LIBRARY`) for a team library,
    /// whose PDFs this machine caches under `$XDG_CACHE_HOME/margin/team/` (or
    /// `$MARGIN_HOME/cache/team/`).
    public static func resolve(library: String?, environment: [String: String]) -> LibraryPaths {
        let keyFile = defaultKeyFile(environment: environment)
        let named =
            library.flatMap { $0.isEmpty ? nil : $0 } ?? environment["MARGIN_LIBRARY"].flatMap { $0.isEmpty ? nil : $0 }
        if let named, isPostgresURL(named) {
            let userHome = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
            let caches =
                environment["MARGIN_HOME"].flatMap { $0.isEmpty ? nil : $0 + "/cache" }
                ?? (environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? userHome + "/.cache")
                + "/margin"
            let components = URLComponents(string: named)
            let place = [components?.host ?? "", components?.port.map(String.init) ?? "5432", components?.path ?? ""]
                .joined(separator: "-").map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "." ? $0 : "_" }
            return LibraryPaths(database: named, cache: caches + "/team/" + String(place), keyFile: keyFile)
        }
        if let named, named.lowercased().hasPrefix("sqlite://") {
            return LibraryPaths(home: String(named.dropFirst("sqlite://".count)), keyFile: keyFile)
        }
        if let library, !library.isEmpty { return LibraryPaths(home: library, keyFile: keyFile) }
        if let home = environment["MARGIN_HOME"], !home.isEmpty { return LibraryPaths(home: home, keyFile: keyFile) }
        let userHome = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? userHome + "/.local/share"
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? userHome + "/.cache"
        return LibraryPaths(database: data + "/margin/library.sqlite", cache: cache + "/margin", keyFile: keyFile)
    }
}

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
        let root = URL(fileURLWithPath: home).standardizedFileURL.path
        self.init(database: root + "/library.sqlite", cache: root + "/cache", keyFile: keyFile)
    }

    /// Resolves the paths from the `--library` option and the environment.
    public static func resolve(library: String?, environment: [String: String]) -> LibraryPaths {
        let keyFile = defaultKeyFile(environment: environment)
        if let library, !library.isEmpty { return LibraryPaths(home: library, keyFile: keyFile) }
        if let home = environment["MARGIN_HOME"], !home.isEmpty { return LibraryPaths(home: home, keyFile: keyFile) }
        let userHome = environment["HOME"].flatMap { $0.isEmpty ? nil : $0 } ?? NSHomeDirectory()
        let data = environment["XDG_DATA_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? userHome + "/.local/share"
        let cache = environment["XDG_CACHE_HOME"].flatMap { $0.hasPrefix("/") ? $0 : nil } ?? userHome + "/.cache"
        return LibraryPaths(database: data + "/margin/library.sqlite", cache: cache + "/margin", keyFile: keyFile)
    }
}

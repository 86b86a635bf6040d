import ArgumentParser
import Foundation
import MarginKit

/// Options every command takes.
struct GlobalOptions: ParsableArguments {
    @Option(name: .long, help: ArgumentHelp("Keep the library in DIR (wins over $MARGIN_HOME).", valueName: "DIR"))
    var library: String?

    @Flag(name: [.customShort("q"), .long], help: "No progress or chatter on stderr.")
    var quiet = false

    @Flag(name: .long, help: "Print exactly one JSON document on stdout.")
    var json = false

    /// Opens the library these options point at.
    func openLibrary() throws -> Library {
        try Library(paths: LibraryPaths.resolve(library: library))
    }

    /// A message for a person, on stderr, unless --quiet.
    func note(_ message: String) {
        if !quiet { Console.error(message) }
    }
}

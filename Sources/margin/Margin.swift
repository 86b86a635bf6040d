import ArgumentParser
import Foundation
import MarginKit

/// The `margin` command: configuration only; each verb lives in `Subcommands/`.
@main
struct Margin: AsyncParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "margin",
        abstract: "Keep a library of PDFs and everything you leave in them.",
        discussion: """
            Add PDFs by URL or path; they are cached by content (SHA-256) and saved as books with \
            title, author, page count, folder and tags. Data lives under $MARGIN_HOME (or \
            --library DIR), else under the XDG data and cache folders.

            Select a book (BOOK) by its id, a unique SHA-256 prefix (4+ hex digits) or a unique \
            part of its title. Pages are 1-based. Every command takes --json, --quiet and --library.
            """,
        version: MarginVersion.current,
        subcommands: [
            Add.self, List.self, Show.self, Recent.self, Edit.self, Remove.self, PathCommand.self, Fetch.self, Refresh.self,
            BookCommand.self, CacheCommand.self, Reindex.self, Text.self, Search.self, Render.self, BookmarkCommand.self, HighlightCommand.self,
            MemoCommand.self, Annotations.self, Export.self, Import.self, ImportAnnotations.self, DB.self,
        ]
    )

    static func main() async {
        let arguments = hoistGlobalOptions(Array(CommandLine.arguments.dropFirst()))
        do {
            var command = try parseAsRoot(arguments)
            if var command = command as? AsyncParsableCommand {
                try await command.run()
            } else {
                try command.run()
            }
            OpenLibraries.shared.finishWriting()
            Foundation.exit(0)
        } catch {
            OpenLibraries.shared.finishWriting()
            exit(reporting: error)
        }
    }

    /// Prints an error as one `error: …` line (hints may follow) and exits non-zero; help and
    /// version requests print to stdout and exit 0.
    static func exit(reporting error: any Error) -> Never {
        let code = exitCode(for: error)
        if let error = error as? ExitCode {
            Foundation.exit(error.rawValue)
        }
        if code == .success {
            print(fullMessage(for: error))
            Foundation.exit(0)
        }
        if code == .validationFailure {
            // An argument error: say it, then how to use the command.
            let usage = fullMessage(for: error).split(separator: "\n", omittingEmptySubsequences: false)
                .drop { !$0.hasPrefix("Usage:") }.joined(separator: "\n")
            Console.error("error: \(message(for: error))")
            if !usage.isEmpty { Console.error(usage.trimmingCharacters(in: .whitespacesAndNewlines)) }
            Foundation.exit(code.rawValue)
        }
        let text = (error as? LocalizedError)?.errorDescription ?? "\(error)"
        Console.error("error: \(text)")
        Foundation.exit(code == .success ? 1 : code.rawValue)
    }

    /// Lets the global options come before the verb (`margin --json list`): ArgumentParser reads
    /// them on the subcommand, so move them after the verb's name(s).
    static func hoistGlobalOptions(_ arguments: [String]) -> [String] {
        var hoisted = [String]()
        var rest = arguments[...]
        while let first = rest.first {
            if first == "--json" || first == "--quiet" || first.hasPrefix("--library=") {
                hoisted.append(first)
                rest = rest.dropFirst()
            } else if first == "--library", rest.count >= 2 {
                hoisted += rest.prefix(2)
                rest = rest.dropFirst(2)
            } else {
                break
            }
        }
        guard !hoisted.isEmpty else { return arguments }
        var result = Array(rest)
        let end = result.firstIndex(of: "--") ?? result.count
        result.insert(contentsOf: hoisted, at: end)
        return result
    }
}

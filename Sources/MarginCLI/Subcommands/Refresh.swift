import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct Refresh: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "refresh",
            abstract: "Revalidate books' sources; store a new version when the PDF at a URL changed.",
            discussion: """
                Each http(s) source is asked with If-None-Match / If-Modified-Since: a 304 \
                transfers nothing. New content becomes a new version of the book: the old file is \
                kept, the text indexed, and every highlight re-anchored on the new version (found \
                again by its text and the text around it; ones that can't be found are marked \
                orphaned, never deleted). --keep-old stores the new version but keeps serving the \
                old one. 'margin book versions BOOK' lists versions.
                """
        )

        @Argument(help: "The books (all when none are given).") var books: [String] = []
        @Flag(help: "Store a new version but keep serving the old one.") var keepOld = false
        @OptionGroup var limits: DownloadOptions
        @OptionGroup var ocr: OCROptions
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            try ocr.apply()
            let library = try global.openLibrary()
            let selected = try await library.resolveAll(books)
            installInterruptHandler(global)
            let progress = TerminalProgress.make(global)
            let outcomes = await library.refresh(
                selected, keepOld: keepOld, maxSize: limits.maxSize.bytes, timeout: limits.timeout,
                progress: progress, observer: progress)
            try await global.show(outcomes) {
                for outcome in outcomes where outcome.status != .failed {
                    Console.out(refreshLine(outcome))
                }
            }
            if outcomes.isEmpty { global.note("the library is empty; nothing to refresh") }
            for outcome in outcomes where outcome.status == .failed {
                Console.error("error: \(outcome.title): \(outcome.error ?? "failed")")
            }
            if outcomes.contains(where: { $0.status == .failed }) { throw ExitCode(1) }
        }

        private func refreshLine(_ outcome: RefreshOutcome) -> String {
            let says: [RefreshOutcome.Status: String] = [
                .notModified: "not modified (304)", .unchanged: "unchanged", .updated: "new version, now served",
                .storedNewVersion: "new version stored, old one still served",
                .noSource: "no http(s) source to check",
            ]
            var line = "\(outcome.book)  \(outcome.title): \(says[outcome.status] ?? outcome.status.rawValue)"
            if let counts = outcome.highlights {
                line +=
                    " (highlights: \(counts.moved) moved, \(counts.unchanged) unchanged, \(counts.orphaned) orphaned)"
            }
            return line
        }
    }

    struct BookCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "book", abstract: "About a book's files.",
            subcommands: Margin.subcommands(of: BookCommand.self)
        )

        struct Versions: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "versions", abstract: "List the versions of a book's PDF, oldest first."
            )

            @Argument(help: "The book.") var book: String
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let library = try global.openLibrary()
                let selected = try await library.resolve(book)
                let versions = try await library.versions(of: selected)
                try await global.show(library.versionViews(versions, of: selected)) {
                    // "#" is the number 'margin book use BOOK N' takes (1 = oldest).
                    var rows = [[String]]()
                    for (index, version) in versions.enumerated() {
                        let state =
                            (version.sha256 == selected.sha256 ? "current" : "")
                            + (library.blobs.contains(version.sha256) ? "" : " (not cached)")
                        rows.append([
                            String(index + 1), String(version.sha256.prefix(12)), String(version.pages),
                            formatBytes(version.bytes), shortDate(version.addedAt),
                            Console.cell(version.source.map(redactedURL), width: 40), state,
                        ])
                    }
                    Console.table(["#", "SHA256", "PAGES", "SIZE", "ADDED", "SOURCE", ""], rows)
                }
            }
        }
    }
}

extension Margin.BookCommand {
    struct Use: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "use", abstract: "Serve another stored version of a book's PDF.",
            discussion: """
                Switches the book to a version 'margin book versions' lists (by its number, 1 = \
                oldest, or a SHA-256 prefix): one kept by 'margin refresh --keep-old', or an older \
                one. Its text is indexed, highlights are re-anchored on it (or marked orphaned), \
                and bookmarks and memos move with their page's text.

                Examples:
                  margin book use 3 2
                  margin book use "attention" 9f2c
                """
        )

        @Argument(help: "The book.") var book: String
        @Argument(
            help: ArgumentHelp("The version: its number in 'book versions' or a SHA-256 prefix.", valueName: "VERSION"))
        var version: String
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let library = try global.openLibrary()
            let selected = try await library.resolve(book)
            let outcome = try await library.useVersion(selected, version: version)
            try await global.show(outcome) {
                let counts = outcome.highlights ?? AnchorCounts()
                Console.out(
                    "\(selected.title) now serves version \(outcome.sha256?.prefix(12) ?? ""); highlights: "
                        + "\(counts.moved) moved, \(counts.unchanged) unchanged, \(counts.orphaned) orphaned")
            }
        }
    }
}

/// A version as `book versions --json` shows it.

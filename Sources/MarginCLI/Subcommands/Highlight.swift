import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct HighlightCommand: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "highlight",
            abstract: "Highlight text on pages; list, edit and remove highlights.",
            subcommands: Margin.subcommands(of: HighlightCommand.self)
        )

        struct Add: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "add", abstract: "Highlight a text, found on the page by poppler.",
                discussion: """
                    The text is matched case- and accent-insensitively, across line breaks. Without \
                    --page, the first match in the book (its page is reported); --occurrence K takes \
                    the K-th match, --all every match. The highlight keeps the exact text under it, \
                    its rectangles in PDF points, and the text around it.

                    Colours: yellow (default), green, blue, pink, purple, red, orange, gray, or #RRGGBB.

                    Examples:
                      margin highlight add 3 --text "inverted index" --color green --note "key idea"
                      margin highlight add 3 --page 7 --text "lemma" --all
                    """
            )

            @Argument(help: "The book.") var book: String
            @Option(help: "The text to highlight.") var text: String
            @Option(help: ArgumentHelp("Only on this page (1-based).", valueName: "N")) var page: Int?
            @Option(help: ArgumentHelp("The K-th match (1-based), on the page or in the book.", valueName: "K"))
            var occurrence: Int?
            @Flag(help: "Highlight every match.") var all = false
            @Option(help: "Colour: a name or #RRGGBB.") var color = "yellow"
            @Option(help: "A note on the highlight.") var note: String?
            @Flag var sharing: Sharing?
            @OptionGroup var global: GlobalOptions

            func validate() throws {
                if all && occurrence != nil { throw ValidationError("give --occurrence K or --all, not both") }
                if let occurrence, occurrence < 1 { throw ValidationError("--occurrence counts from 1") }
                if text.trimmingCharacters(in: .whitespacesAndNewlines).isEmpty {
                    throw ValidationError("--text is empty")
                }
            }

            func run() async throws {
                let library = try global.openLibrary()
                var request = HighlightRequest(text: text)
                request.page = page
                request.occurrence = occurrence
                request.all = all
                request.color = try HighlightColor.parse(color)
                request.note = note
                request.shared = sharing?.isShared ?? false
                let shown = try await library.addHighlightsShown(library.resolve(book), request)
                let highlights = shown.map(\.annotation)
                try await global.show(shown) {
                    for highlight in highlights {
                        Console.out("highlight \(highlight.id ?? 0) on page \(highlight.page): \"\(highlight.text)\"")
                    }
                }
            }
        }

        struct List: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "list", abstract: "List highlights in reading order (of one book, or all)."
            )

            @Argument(help: "The book (all books when omitted).") var book: String?
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let (highlights, titles, library) = try await annotationListing(global, book) {
                    try await $0.highlights(of: $1)
                }
                try await global.show(try await library.views(highlights, titles: titles)) {
                    if highlights.isEmpty { return global.note("no highlights") }
                    annotationTable(
                        ["ID", "BOOK", "PAGE", "COLOR", "TEXT", "NOTE"], highlights
                    ) {
                        [
                            String($0.id ?? 0), Console.cell(titles[$0.bookId], width: 28),
                            String($0.page) + ($0.orphaned ? "?" : ""),
                            $0.color, Console.cell($0.text, width: 50), Console.cell($0.note, width: 30),
                        ]
                    }
                }
            }
        }

        struct Edit: AsyncParsableCommand {
            static let configuration = CommandConfiguration(
                commandName: "edit",
                abstract: "Change a highlight's note or colour (--note \"\" clears it), or share it."
            )

            @Argument(help: "The highlight's id.") var id: Int64
            @Option(help: "The new note.") var note: String?
            @Option(help: "The new colour.") var color: String?
            @Flag var sharing: Sharing?
            @OptionGroup var global: GlobalOptions

            func validate() throws {
                if note == nil && color == nil && sharing == nil {
                    throw ValidationError("nothing to change: give --note, --color, --shared or --private")
                }
            }

            func run() async throws {
                let library = try global.openLibrary()
                let highlight = try await library.editHighlight(
                    id: id, note: note, color: color, shared: sharing?.isShared)
                try await global.show(try await library.view(highlight)) {
                    Console.out("updated highlight \(id)")
                }
            }
        }

        struct Remove: AsyncParsableCommand {
            static let configuration = CommandConfiguration(commandName: "rm", abstract: "Remove a highlight.")

            @Argument(help: "The highlight's id.") var id: Int64
            @OptionGroup var global: GlobalOptions

            func run() async throws {
                let library = try global.openLibrary()
                let highlight = try await library.removeHighlight(id: id)
                try await global.show(try await library.view(highlight)) {
                    Console.out("removed highlight \(id)")
                }
            }
        }
    }

    struct Annotations: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "annotations",
            abstract: "Everything on a book, in reading order: bookmarks, highlights and memos."
        )

        @Argument(help: "The book.") var book: String
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let library = try global.openLibrary()
            let selected = try await library.resolve(book)
            let items = try await library.annotations(of: selected)
            try await library.touch(selected)
            func views() async throws -> [AnnotationItemView] {
                let guide = try await library.guide(of: selected.id ?? 0)
                return items.map { $0.view(in: guide) }
            }
            try await global.show(try await views()) { printAnnotations(items, of: selected) }
        }

        private func printAnnotations(_ items: [AnnotationItem], of selected: Book) {
            if items.isEmpty { return global.note("'\(selected.title)' has no annotations yet") }
            for item in items {
                switch item {
                case .bookmark(let b):
                    Console.out("p. \(b.page)  bookmark \(b.id ?? 0)" + (b.label.map { ": \($0)" } ?? ""))
                case .highlight(let h):
                    Console.out(
                        "p. \(h.page)  highlight \(h.id ?? 0) [\(h.color)]: \"\(h.text)\""
                            + (h.note.map { " — \($0)" } ?? ""))
                case .memo(let m):
                    Console.out((m.page.map { "p. \($0)" } ?? "book") + "  memo \(m.id ?? 0): \(m.text)")
                }
            }
        }
    }
}

import ArgumentParser
import Foundation
import MarginCore
import MarginKit

extension Margin {
    struct Toc: AsyncParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "toc",
            abstract: "Show a book's outline (table of contents): titles, pages, levels.",
            discussion: """
                The outline the PDF carries (a viewer's bookmarks panel), indented by level, each \
                entry with its page as the PDF prints it (its page label: "xii", "A-3") and, when \
                that differs, the page number margin uses (--page N of render, text, highlight). \
                A PDF without an outline prints nothing (and [] with --json).

                --json gives [{"title", "page", "level", "pageLabel"}] (level 1 is the top; page \
                is null for an entry that leads nowhere in the book).

                Examples:
                  margin toc 3
                  margin toc "deep learning" --json | jq '.[] | select(.level == 1)'
                """
        )

        @Argument(help: "The book.") var book: String
        @OptionGroup var global: GlobalOptions

        func run() async throws {
            let library = try global.openLibrary()
            let selected = try await library.resolve(book)
            let entries = try await library.tableOfContents(selected)
            try await global.show(entries) {
                if entries.isEmpty { return global.note("'\(selected.title)' has no outline") }
                for entry in entries {
                    let indent = String(repeating: "  ", count: max(0, entry.level - 1))
                    let place: String
                    switch (entry.page, entry.pageLabel) {
                    case (nil, _): place = "-"
                    case (let page?, let label?) where label != String(page): place = "\(label) (p. \(page))"
                    case (let page?, _): place = String(page)
                    }
                    Console.out(terminalSafe(indent + entry.title) + "  " + terminalSafe(place))
                }
            }
        }
    }
}

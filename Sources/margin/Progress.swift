import Foundation

/// A one-line progress bar on stderr, shown only on a terminal and never with --quiet or --json.
struct ProgressBar: Sendable {
    let label: String
    let enabled: Bool

    init(label: String, global: GlobalOptions) {
        self.label = label
        enabled = Console.stderrIsTTY && !global.quiet && !global.json
    }

    /// A callback for (done, total).
    var callback: (@Sendable (Int, Int) -> Void)? {
        guard enabled else { return nil }
        let label = self.label
        return { done, total in
            let width = 30
            let filled = total > 0 ? width * done / total : width
            let bar = String(repeating: "█", count: filled) + String(repeating: "░", count: width - filled)
            let percent = total > 0 ? 100 * done / total : 100
            FileHandle.standardError.write(Data("\r\(label) \(bar) \(done)/\(total) \(percent)%\u{1B}[K".utf8))
            if done == total { FileHandle.standardError.write(Data("\n".utf8)) }
        }
    }
}

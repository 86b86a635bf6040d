import Foundation

/// A file-name-safe form of a title: lowercase ASCII letters and digits joined by dashes.
public func slug(_ title: String, maxLength: Int = 60) -> String {
    // Folded as all of Margin folds text (case, accents, ligatures), then ASCII letters and digits.
    let folded = MarginCore.folded(title)
    var result = ""
    var dash = false
    for scalar in folded.unicodeScalars {
        if scalar.isASCII, scalar.properties.isAlphabetic || ("0"..."9").contains(scalar) {
            if dash && !result.isEmpty { result.append("-") }
            result.unicodeScalars.append(scalar)
            dash = false
        } else {
            dash = true
        }
        if result.count >= maxLength { break }
    }
    return result.isEmpty ? "book" : result
}

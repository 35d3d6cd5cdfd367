//! Symbolic dimensions as exporters write them (`batch`,
//! `floor(floor(height/2 - 1/2)/2) + 1`, `2*seq_len`): evaluated exactly,
//! over rationals, once their names are given values.

use std::collections::HashMap;

/// An exact rational with a positive denominator.
#[derive(Debug, Clone, Copy, PartialEq)]
struct Ratio {
    num: i128,
    den: i128,
}

fn gcd(a: i128, b: i128) -> i128 {
    if b == 0 { a.abs() } else { gcd(b, a % b) }
}

impl Ratio {
    fn new(num: i128, den: i128) -> Option<Ratio> {
        if den == 0 {
            return None;
        }
        let g = gcd(num, den).max(1);
        let sign = if den < 0 { -1 } else { 1 };
        Some(Ratio {
            num: num / g * sign,
            den: den / g * sign,
        })
    }

    fn int(n: i128) -> Ratio {
        Ratio { num: n, den: 1 }
    }

    fn add(self, o: Ratio) -> Option<Ratio> {
        let num = self
            .num
            .checked_mul(o.den)?
            .checked_add(o.num.checked_mul(self.den)?)?;
        Ratio::new(num, self.den.checked_mul(o.den)?)
    }

    fn neg(self) -> Ratio {
        Ratio {
            num: -self.num,
            den: self.den,
        }
    }

    fn mul(self, o: Ratio) -> Option<Ratio> {
        Ratio::new(self.num.checked_mul(o.num)?, self.den.checked_mul(o.den)?)
    }

    fn div(self, o: Ratio) -> Option<Ratio> {
        Ratio::new(self.num.checked_mul(o.den)?, self.den.checked_mul(o.num)?)
    }

    fn floor(self) -> Ratio {
        Ratio::int(self.num.div_euclid(self.den))
    }

    fn ceil(self) -> Ratio {
        Ratio::int(-((-self.num).div_euclid(self.den)))
    }
}

/// The value of dimension expression `text` with `names` bound, when it is
/// a whole non-negative number; `None` when a name is unbound, the text is
/// not an expression of `+ - * / //`, `floor`, `ceil`, `max`, `min` and
/// parentheses, or the arithmetic overflows.
pub(crate) fn evaluate(text: &str, names: &HashMap<String, usize>) -> Option<usize> {
    if let Some(&v) = names.get(text.trim()) {
        return Some(v);
    }
    let mut parser = Parser {
        text: text.as_bytes(),
        at: 0,
        names,
        depth: 0,
    };
    let value = parser.sum()?;
    parser.skip_space();
    if parser.at != parser.text.len() || value.den != 1 {
        return None;
    }
    usize::try_from(value.num).ok()
}

struct Parser<'a> {
    text: &'a [u8],
    at: usize,
    names: &'a HashMap<String, usize>,
    depth: usize,
}

impl Parser<'_> {
    fn skip_space(&mut self) {
        while self.text.get(self.at).is_some_and(u8::is_ascii_whitespace) {
            self.at += 1;
        }
    }

    /// Consumes `token` (after spaces) when it comes next.
    fn eat(&mut self, token: &str) -> bool {
        self.skip_space();
        if self.text[self.at..].starts_with(token.as_bytes()) {
            self.at += token.len();
            true
        } else {
            false
        }
    }

    fn sum(&mut self) -> Option<Ratio> {
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let mut value = self.product()?;
        loop {
            if self.eat("+") {
                value = value.add(self.product()?)?;
            } else if self.eat("-") {
                value = value.add(self.product()?.neg())?;
            } else {
                self.depth -= 1;
                return Some(value);
            }
        }
    }

    fn product(&mut self) -> Option<Ratio> {
        let mut value = self.unary()?;
        loop {
            if self.eat("*") {
                value = value.mul(self.unary()?)?;
            } else if self.eat("//") {
                value = value.div(self.unary()?)?.floor();
            } else if self.eat("/") {
                value = value.div(self.unary()?)?;
            } else {
                return Some(value);
            }
        }
    }

    fn unary(&mut self) -> Option<Ratio> {
        let mut negative = false;
        while self.eat("-") {
            negative = !negative;
        }
        let value = self.atom()?;
        Some(if negative { value.neg() } else { value })
    }

    fn atom(&mut self) -> Option<Ratio> {
        if self.eat("(") {
            let value = self.sum()?;
            return self.eat(")").then_some(value);
        }
        self.skip_space();
        let start = self.at;
        let word = |c: &u8| c.is_ascii_alphanumeric() || *c == b'_' || *c == b'.';
        while self.text.get(self.at).is_some_and(word) {
            self.at += 1;
        }
        let token = std::str::from_utf8(&self.text[start..self.at]).ok()?;
        if token.is_empty() {
            return None;
        }
        if token.bytes().all(|c| c.is_ascii_digit()) {
            return Some(Ratio::int(token.parse().ok()?));
        }
        if self.eat("(") {
            return self.call(&token.to_ascii_lowercase());
        }
        self.names.get(token).map(|&v| Ratio::int(v as i128))
    }

    /// `floor(x)`, `ceil(x)`, `max(a, b, ...)`, `min(a, b, ...)`, after the `(`.
    fn call(&mut self, function: &str) -> Option<Ratio> {
        let mut args = vec![self.sum()?];
        while self.eat(",") {
            args.push(self.sum()?);
        }
        if !self.eat(")") {
            return None;
        }
        // a < b, exactly (denominators are positive).
        let less = |a: Ratio, b: Ratio| Some(a.num.checked_mul(b.den)? < b.num.checked_mul(a.den)?);
        let pick = |want_max: bool| {
            let mut best = args[0];
            for &x in &args[1..] {
                if less(best, x)? == want_max {
                    best = x;
                }
            }
            Some(best)
        };
        match (function, args.as_slice()) {
            ("floor", [x]) => Some(x.floor()),
            ("ceil" | "ceiling", [x]) => Some(x.ceil()),
            ("max", _) => pick(true),
            ("min", _) => pick(false),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn eval(text: &str, names: &[(&str, usize)]) -> Option<usize> {
        let names = names.iter().map(|&(n, v)| (n.to_string(), v)).collect();
        evaluate(text, &names)
    }

    #[test]
    fn exporter_expressions_evaluate_exactly() {
        let hw = [("height", 320), ("width", 640)];
        assert_eq!(eval("floor(floor(height/2 - 1/2)/2) + 1", &hw), Some(80));
        assert_eq!(
            eval(
                "(floor(height/2 - 1/2) + 1)*(floor(width/2 - 1/2) + 1)",
                &hw
            ),
            Some(160 * 320)
        );
        assert_eq!(eval("2*seq + 1", &[("seq", 7)]), Some(15));
        assert_eq!(
            eval("DynamicDimension.0", &[("DynamicDimension.0", 3)]),
            Some(3)
        );
        assert_eq!(eval("max(a, 4) - min(a, 4)", &[("a", 9)]), Some(5));
        assert_eq!(eval("ceil(a/4) + a//4", &[("a", 9)]), Some(5));
        assert_eq!(eval("7", &[]), Some(7));
    }

    #[test]
    fn what_is_not_a_whole_number_is_none() {
        assert_eq!(eval("height", &[]), None, "unbound");
        assert_eq!(eval("a/2", &[("a", 3)]), None, "a fraction");
        assert_eq!(eval("1 - a", &[("a", 3)]), None, "negative");
        assert_eq!(eval("a/0", &[("a", 3)]), None, "division by zero");
        assert_eq!(eval("sqrt(a)", &[("a", 4)]), None, "unknown function");
        assert_eq!(eval("(a", &[("a", 4)]), None, "unbalanced");
        assert_eq!(eval("a b", &[("a", 4), ("b", 1)]), None, "trailing text");
        let deep = format!("{}1{}", "(".repeat(200), ")".repeat(200));
        assert_eq!(eval(&deep, &[]), None, "nesting past the limit");
        let minus = format!("{}1", "-".repeat(100_000));
        assert_eq!(
            eval(&minus, &[]),
            Some(1),
            "100 000 signs, no deep recursion"
        );
        let huge = format!("{}*{}", i64::MAX, i64::MAX);
        assert_eq!(eval(&format!("{huge}*{huge}"), &[]), None, "overflow");
    }
}

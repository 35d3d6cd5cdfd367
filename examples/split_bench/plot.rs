//! The PNG chart: GB/s by case, one bar per method.

use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::method::Method;
use crate::report::Row;

const FONT_PATHS: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

pub fn bar_chart(rows: &[Row], path: &str, device: &str) -> Result<(), Box<dyn std::error::Error>> {
    let font = FONT_PATHS
        .iter()
        .find_map(|p| std::fs::read(p).ok())
        .ok_or(
            "no DejaVuSans.ttf found for the chart's text (apt-get install fonts-dejavu-core)",
        )?;
    let font: &'static [u8] = Box::leak(font.into_boxed_slice());
    register_font("sans-serif", FontStyle::Normal, font)
        .map_err(|_| "cannot load the chart font")?;

    let mut cases: Vec<&str> = Vec::new();
    let mut methods: Vec<Method> = Vec::new();
    for r in rows {
        if !cases.contains(&r.case.as_str()) {
            cases.push(&r.case);
        }
        // Views move nothing; their "GB/s" would dwarf every bar.
        if r.method != Method::View && !methods.contains(&r.method) {
            methods.push(r.method);
        }
    }
    let max = rows
        .iter()
        .filter(|r| r.method != Method::View)
        .map(|r| r.gbps)
        .fold(0.0, f64::max)
        * 1.1;
    let slot = methods.len() + 1;
    let width = (cases.len() * slot) as f64;

    let root = BitMapBackend::new(path, (1400, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("wgpu-split split_bench on {device}: GB/s (read + written)"),
            ("sans-serif", 22),
        )
        .margin(15)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..width, 0.0..max)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(0)
        .y_desc("GB/s")
        .label_style(("sans-serif", 13))
        .draw()?;
    for (m, method) in methods.iter().enumerate() {
        let color = Palette99::pick(m).to_rgba();
        let bars: Vec<_> = rows
            .iter()
            .filter(|r| r.method == *method)
            .filter_map(|r| {
                let c = cases.iter().position(|c| *c == r.case)?;
                let x = (c * slot + m) as f64;
                Some(Rectangle::new(
                    [(x, 0.0), (x + 0.9, r.gbps)],
                    color.filled(),
                ))
            })
            .collect();
        chart
            .draw_series(bars)?
            .label(method.name())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.9))
        .border_style(BLACK)
        .label_font(("sans-serif", 14))
        .position(SeriesLabelPosition::UpperRight)
        .draw()?;
    // Case names under each group of bars, in two staggered lines so long
    // names do not collide.
    for (i, case) in cases.iter().enumerate() {
        let centre = i as f64 * slot as f64 + (slot - 1) as f64 / 2.0;
        let (x, y) = chart.backend_coord(&(centre, 0.0));
        let style = TextStyle::from(("sans-serif", 13).into_font()).pos(
            plotters::style::text_anchor::Pos::new(
                plotters::style::text_anchor::HPos::Center,
                plotters::style::text_anchor::VPos::Top,
            ),
        );
        root.draw(&Text::new(
            case.to_string(),
            (x, y + 6 + 16 * (i as i32 % 2)),
            style,
        ))?;
    }
    root.present()?;
    Ok(())
}

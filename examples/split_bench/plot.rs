//! The PNG chart: for each case, the planner's speed and the GPU classes'
//! kernels as ratios to the copy baselines (one copy command and a plain
//! vec4 compute copy of the same bytes), with the baseline at 1.

use plotters::prelude::*;
use plotters::style::{FontStyle, register_font};

use crate::method::Method;
use crate::report::{Row, cases_of, ratio};

const FONT_PATHS: [&str; 2] = [
    "/usr/share/fonts/truetype/dejavu/DejaVuSans.ttf",
    "/usr/share/fonts/dejavu/DejaVuSans.ttf",
];

/// The bars of each case: (legend, numerator, denominator).
const BARS: [(&str, Method, Method); 3] = [
    (
        "plan / copy_limit (one copy command)",
        Method::Plan,
        Method::CopyLimit,
    ),
    (
        "plan / shader_copy (a plain vec4 kernel)",
        Method::Plan,
        Method::ShaderCopy,
    ),
    (
        "gpu_discrete / shader_copy (the kernels a discrete GPU's model chooses)",
        Method::GpuDiscrete,
        Method::ShaderCopy,
    ),
];

pub fn ratio_chart(
    rows: &[Row],
    path: &str,
    device: &str,
) -> Result<(), Box<dyn std::error::Error>> {
    let font = FONT_PATHS
        .iter()
        .find_map(|p| std::fs::read(p).ok())
        .ok_or(
            "no DejaVuSans.ttf found for the chart's text (apt-get install fonts-dejavu-core)",
        )?;
    let font: &'static [u8] = Box::leak(font.into_boxed_slice());
    register_font("sans-serif", FontStyle::Normal, font)
        .map_err(|_| "cannot load the chart font")?;

    let cases = cases_of(rows);
    let ratios: Vec<Vec<Option<f64>>> = cases
        .iter()
        .map(|case| {
            BARS.iter()
                .map(|&(_, a, b)| ratio(rows, case, a, b))
                .collect()
        })
        .collect();
    let max = ratios
        .iter()
        .flatten()
        .flatten()
        .fold(1.2f64, |m, &r| m.max(r))
        * 1.35; // room for the legend above the bars
    let slot = BARS.len() + 1;
    let width = (cases.len() * slot) as f64;

    let root = BitMapBackend::new(path, (1400, 700)).into_drawing_area();
    root.fill(&WHITE)?;
    let mut chart = ChartBuilder::on(&root)
        .caption(
            format!("wgpu-split split_bench on {device}: speed / copy baseline"),
            ("sans-serif", 22),
        )
        .margin(15)
        .margin_right(90)
        .x_label_area_size(45)
        .y_label_area_size(60)
        .build_cartesian_2d(0.0..width, 0.0..max)?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .y_max_light_lines(1)
        .x_labels(0)
        .y_desc("speed ratio (1: the baseline)")
        .label_style(("sans-serif", 13))
        .draw()?;
    for (m, (legend, ..)) in BARS.iter().enumerate() {
        let color = Palette99::pick(m).to_rgba();
        let bars: Vec<_> = ratios
            .iter()
            .enumerate()
            .filter_map(|(c, case)| {
                let r = case[m]?;
                let x = (c * slot + m) as f64;
                Some(Rectangle::new([(x, 0.0), (x + 0.9, r)], color.filled()))
            })
            .collect();
        chart
            .draw_series(bars)?
            .label(*legend)
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 12, y + 5)], color.filled()));
    }
    // The baseline: as fast as the copy.
    chart.draw_series(LineSeries::new(
        [(0.0, 1.0), (width, 1.0)],
        BLACK.stroke_width(2),
    ))?;
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

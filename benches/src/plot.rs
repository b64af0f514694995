//! The ratio per case per column on a log scale, as an SVG bar chart (plotters).

use mochi_ratio_table::BenchReport;
use plotters::prelude::*;
use std::path::Path;

const COLORS: [RGBColor; 7] = [
    RGBColor(214, 39, 40),
    RGBColor(31, 119, 180),
    RGBColor(255, 127, 14),
    RGBColor(44, 160, 44),
    RGBColor(148, 103, 189),
    RGBColor(140, 86, 75),
    RGBColor(127, 127, 127),
];

/// Draws one group of bars per case, one bar per column with a ratio, on a log scale.
pub fn draw(report: &BenchReport, path: &Path) -> Result<(), String> {
    let ratios: Vec<f64> = report
        .cases
        .iter()
        .flat_map(|c| report.columns.iter().filter_map(|col| c.ratio(col)))
        .filter(|r| *r > 0.0)
        .collect();
    if ratios.is_empty() {
        return Err("no ratio to plot".to_string());
    }
    let lo = ratios
        .iter()
        .copied()
        .fold(f64::INFINITY, f64::min)
        .min(1.0)
        / 1.5;
    let hi = ratios.iter().copied().fold(0.0, f64::max) * 1.5;
    let n_cases = report.cases.len();
    let n_cols = report.columns.len();
    let width = (160 + 90 * n_cases) as u32;
    let root = SVGBackend::new(path, (width, 620)).into_drawing_area();
    let fail = |e: &dyn std::fmt::Display| format!("cannot draw {}: {e}", path.display());
    root.fill(&WHITE).map_err(|e| fail(&e))?;
    let labels: Vec<String> = report.cases.iter().map(|c| c.label.clone()).collect();
    let mut chart = ChartBuilder::on(&root)
        .caption(
            "gradient time / primal time (log scale; lower is better)",
            ("sans-serif", 20),
        )
        .margin(15)
        .x_label_area_size(150)
        .y_label_area_size(60)
        .build_cartesian_2d(0f64..n_cases as f64, (lo..hi).log_scale())
        .map_err(|e| fail(&e))?;
    chart
        .configure_mesh()
        .disable_x_mesh()
        .x_labels(n_cases * 2 + 1)
        .x_label_formatter(&|x| {
            let k = x.floor() as usize;
            if (x - k as f64 - 0.5).abs() < 1e-9 && k < labels.len() {
                labels[k].clone()
            } else {
                String::new()
            }
        })
        .x_label_style(
            ("sans-serif", 12)
                .into_font()
                .transform(FontTransform::Rotate90),
        )
        .y_desc("ratio")
        .draw()
        .map_err(|e| fail(&e))?;
    let bar = 0.8 / n_cols as f64;
    for (j, column) in report.columns.iter().enumerate() {
        if report.cases.iter().all(|c| c.ratio(column).is_none()) {
            continue; // no bar, no legend entry
        }
        let color = COLORS[j % COLORS.len()];
        let bars: Vec<Rectangle<(f64, f64)>> = report
            .cases
            .iter()
            .enumerate()
            .filter_map(|(i, case)| {
                let r = case.ratio(column)?;
                let x0 = i as f64 + 0.1 + j as f64 * bar;
                Some(Rectangle::new(
                    [(x0, lo), (x0 + bar * 0.9, r)],
                    color.filled(),
                ))
            })
            .collect();
        chart
            .draw_series(bars)
            .map_err(|e| fail(&e))?
            .label(column.clone())
            .legend(move |(x, y)| Rectangle::new([(x, y - 5), (x + 10, y + 5)], color.filled()));
    }
    // The parity line: a gradient as cheap as the primal.
    chart
        .draw_series(LineSeries::new(
            [(0.0, 1.0), (n_cases as f64, 1.0)],
            BLACK.stroke_width(1),
        ))
        .map_err(|e| fail(&e))?;
    chart
        .configure_series_labels()
        .background_style(WHITE.mix(0.8))
        .border_style(BLACK)
        .position(SeriesLabelPosition::UpperRight)
        .draw()
        .map_err(|e| fail(&e))?;
    root.present().map_err(|e| fail(&e))?;
    Ok(())
}

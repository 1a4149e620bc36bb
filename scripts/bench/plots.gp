# The plots of docs/benchmarks.md, from the CSV files of a results folder:
#   gnuplot -e "dir='results'" scripts/bench/plots.gp
# writes dir/tail_latency.png, dir/overhead.png, dir/churn.png and
# dir/hedge_tail.png.
# Latency-by-percentile curves put 1/(1-p) on a log x axis, so that the
# tail spreads out as in Buoyant's "Beyond Round Robin" plots.
set terminal pngcairo size 1000,560 noenhanced font ",11"
set datafile separator ","
set grid
set key autotitle columnhead top left

percentile_axis = 'set logscale x; set xrange [1:10000]; set xtics ("p0" 1, "p50" 2, "p90" 10, "p99" 100, "p99.9" 1000, "p99.99" 10000); set xlabel "percentile"'

set output dir."/tail_latency.png"
eval percentile_axis
set logscale y
set ylabel "latency (ms, log scale)"
set title "Tail latency with one slow backend, per balancer (open loop)"
ncols = int(system("head -1 '".dir."/tail_latency_curve.csv' | awk -F, '{print NF}'"))
plot for [i=3:ncols] dir."/tail_latency_curve.csv" using 2:i with lines lw 2

set output dir."/hedge_tail.png"
set title "Hedged requests: 5 % of requests stall 100 ms on any backend (open loop)"
ncols = int(system("head -1 '".dir."/hedge_tail_curve.csv' | awk -F, '{print NF}'"))
plot for [i=3:ncols] dir."/hedge_tail_curve.csv" using 2:i with lines lw 2

set output dir."/churn.png"
set ylabel "call latency (µs, log scale)"
set title "mesh::Channel call latency while discovery churns 10,000 endpoints"
ncols = int(system("head -1 '".dir."/churn_curve.csv' | awk -F, '{print NF}'"))
plot for [i=3:ncols] dir."/churn_curve.csv" using 2:i with lines lw 2

reset
set terminal pngcairo size 1000,560 noenhanced font ",11"
set datafile separator ","
set grid ytics
set output dir."/overhead.png"
set style data histograms
set style histogram clustered gap 1
set style fill solid 0.8 border -1
set boxwidth 0.9
set key top left
set xtics rotate by -30 scale 0
set bmargin 5
set ylabel "latency (µs)"
set yrange [0:*]
levels = system("awk -F, 'NR > 1 { print $2 }' '".dir."/overhead.csv' | sort -un | tr '\\n' ' '")
set multiplot layout 1,words(levels) title "Unary call latency: raw gRPC, mesh::Channel, an nghttpx hop (closed loop)"
do for [c in levels] {
  set title "concurrency ".c
  rows = "< awk -F, 'NR > 1 && $2 == ".c." { gsub(/_/, \" \", $1); print }' OFS=, '".dir."/overhead.csv'"
  plot rows using 5:xtic(1) title "p50", "" using 7 title "p99"
}
unset multiplot
